// The options every mode of the runner shares (server, client, robustness): the profile, which scenarios or cases
// run, and the reports. In a file of its own so that the modes' modules can name them without importing cli.ts.
import type { Profile } from './scenario.js';

export interface CommonOptions {
  grep?: string;
  exclude?: string;
  list: boolean;
  profile: Profile;
  reportJson?: string;
  junit?: string;
  html?: string;
  expectedFailures?: string;
}
