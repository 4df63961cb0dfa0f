// How the suite gets registrations and time on a target: the one interface behind our admin API, a third party's
// provisioning command (--provision), and a fixtures file. Actions a means cannot do throw NotSupported; the
// scenarios that need them are skipped with its reason, never failed.
import type { ClientKind, FixtureSet, ProvisionCreated, ProvisionedSession } from '../../generated/index.js';

export type ProvisionAction =
  'create' | 'rotate' | 'deactivate' | 'set_allowlist' | 'advance_clock' | 'cleanup' | 'list_sessions';

/** The means cannot do this action (a command that exits 3, a fixtures file asked to rotate a token). */
export class NotSupported extends Error {
  constructor(
    readonly action: ProvisionAction,
    reason: string,
  ) {
    super(reason);
  }
}

/** Provisioning failed: a refused call, a bad answer. The scenario errors; the target is not blamed. */
export class ProvisionError extends Error {}

export interface Provisioner {
  /** One line for the console and the reports: how this run provisions. */
  readonly description: string;
  /** Whether `create` makes new registrations (then the run removes them at its end), or hands out existing ones. */
  readonly createsRegistrations: boolean;
  /** Proves the means works (the admin token is accepted, the command answers) before any scenario runs. */
  check(): Promise<void>;
  create(fixtures: FixtureSet, scenarioId: string): Promise<ProvisionCreated>;
  rotate(kind: ClientKind, id: string): Promise<string>;
  deactivate(kind: ClientKind, id: string): Promise<void>;
  setAllowlist(agentId: string, appIds: string[] | null): Promise<void>;
  advanceClock(ms: number): Promise<void>;
  listSessions(agentId: string): Promise<ProvisionedSession[]>;
  /** Removes what the run created; the organizations it could not remove are returned. */
  cleanup(orgIds: string[]): Promise<void>;
}

/** Whether the means moves the target's clock: asked once, before the scenarios, with a move of 0 ms. */
export async function hasClock(p: Provisioner): Promise<boolean> {
  try {
    await p.advanceClock(0);
    return true;
  } catch (err) {
    if (err instanceof NotSupported || err instanceof ProvisionError) return false;
    throw err;
  }
}
