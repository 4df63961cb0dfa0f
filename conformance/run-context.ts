// What a run of the suite shares between its scenarios and their steps: the target and its nodes, the profile,
// settings and provisioning means, and what earlier scenarios found out.
import type { ProvisionAction, Provisioner } from './provision/provisioner.js';
import type { Profile, Requirement } from './scenario.js';
import type { Settings } from './settings.js';
import type { Target } from './target.js';

export interface RunContext {
  target: Target;
  /** The bridge's nodes (`--url`); the scenarios' clients are placed across them. */
  nodes: string[];
  provisioner: Provisioner;
  profile: Profile;
  /** The registry; only requirements of the profile are judged. */
  requirements: Map<string, Requirement>;
  settings: Settings;
  hasClock: boolean;
  realTime: boolean;
  realTimeMaxMs: number;
  timeoutMs: number;
  /** Actions the provisioning means said it cannot do, with its reason: later scenarios needing them are skipped. */
  unsupported: Map<ProvisionAction, string>;
  /** Organizations created so far, for the clean-up at the end of the run. */
  createdOrgs: string[];
}
