// Root hooks: nothing a test started outlives it.
import { stopAll } from './bridge.js';

export const mochaHooks = {
  async afterEach(): Promise<void> {
    await stopAll();
  },
};
