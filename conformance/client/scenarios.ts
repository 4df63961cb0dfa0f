// The client role's scenarios: small scripts that drive the mock bridge and judge the client. What a client
// command does is keyed by BRIDGE_SCENARIO (see conformance/README.md, "Client role"). Each failure names the
// requirements (CLI-…, requirements.yaml) its check enforces. Rules of every frame and connection (a valid frame,
// CLI-001; no token in a frame, CLI-021; for agents one connection at a time, CLI-017) are checked by the runner
// in every scenario, so every scenario names them.
import { inProfile, type Profile, type Requirement } from '../scenario.js';
import type { ClientKind } from '../../generated/index.js';
import type { ClientScenario } from './run.js';
import { NO_TOKEN_IN_FRAMES, ONE_AGENT_CONNECTION, VALID_FRAMES } from './context.js';
import { AGENT_SCENARIOS } from './scenarios/agent.js';
import { APP_SCENARIOS } from './scenarios/app.js';
import { CANCEL_SCENARIOS } from './scenarios/cancel.js';
import { CONNECTION_SCENARIOS, SLOW_SCENARIOS } from './scenarios/connection.js';

function withEveryFrameRules(s: ClientScenario): ClientScenario {
  const always = [VALID_FRAMES, NO_TOKEN_IN_FRAMES, ...(s.role === 'agent' ? [ONE_AGENT_CONNECTION] : [])];
  return { ...s, requirements: [...new Set([...s.requirements, ...always])] };
}

export const CLIENT_SCENARIOS: ClientScenario[] = [
  ...AGENT_SCENARIOS,
  ...APP_SCENARIOS,
  ...CONNECTION_SCENARIOS,
  ...SLOW_SCENARIOS,
  ...CANCEL_SCENARIOS,
].map(withEveryFrameRules);

/**
 * The scenarios of a role that run in a profile: those it allows (an error code of our decisions only in the
 * bridge profile, the cancel extension's scenarios only in the cancel profile) that check something of it beyond
 * the rules of every frame (a scenario of our decisions alone runs in the bridge profile only).
 */
export function clientScenarios(role: ClientKind, profile: Profile, registry: Map<string, Requirement>) {
  const everyFrame = new Set([VALID_FRAMES, NO_TOKEN_IN_FRAMES, ONE_AGENT_CONNECTION]);
  return CLIENT_SCENARIOS.filter(
    (s) =>
      s.role === role &&
      (s.profiles ?? [profile]).includes(profile) &&
      s.requirements.some((id) => !everyFrame.has(id) && inProfile(registry.get(id)!, profile)),
  );
}
