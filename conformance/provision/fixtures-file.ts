// Provisioning from a file of pre-provisioned registrations (--fixtures FILE): the one fixtures layout
// (fixtures-layout.yaml) filled with the target's real ids and tokens. It can only hand out what it holds; a test
// clock may still come from an admin API (--admin-token).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  describeErrors,
  validateFixturesFile,
  type ClientKind,
  type FixtureAgent,
  type FixtureSet,
  type FixturesFile,
  type ProvisionCreated,
  type ProvisionedSession,
} from '../../generated/index.js';
import { PreflightError } from '../preflight.js';
import { CONFORMANCE_DIR } from '../scenario.js';
import { NotSupported, type ProvisionAction, type Provisioner } from './provisioner.js';

export const LAYOUT = parse(readFileSync(join(CONFORMANCE_DIR, 'fixtures-layout.yaml'), 'utf8')) as FixtureSet;

const sameAgent = (a: FixtureAgent, b: FixtureAgent | undefined) => !!b && JSON.stringify(a) === JSON.stringify(b);

/** Why a scenario's fixtures are not a part of the layout, or undefined when they are. */
export function outsideLayout(f: Partial<FixtureSet>): string | undefined {
  for (const org of f.orgs ?? [])
    if (!LAYOUT.orgs.includes(org)) return `organization ${org} is not in the fixtures layout`;
  for (const [name, org] of Object.entries(f.apps ?? {}))
    if (LAYOUT.apps[name] !== org) return `app ${name} (in ${org}) is not in the fixtures layout`;
  for (const [name, agent] of Object.entries(f.agents ?? {})) {
    if (!sameAgent(agent, LAYOUT.agents[name]))
      return `agent ${name} ${JSON.stringify(agent)} differs from the fixtures layout's`;
  }
  return undefined;
}

/** Reads and checks a fixtures file: a clear error naming the bad field. */
export function readFixturesFile(path: string): FixturesFile {
  let data: unknown;
  try {
    data = parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new PreflightError(`--fixtures ${path}: ${(err as Error).message}`);
  }
  if (!validateFixturesFile(data))
    throw new PreflightError(`--fixtures ${path}: not a fixtures file: ${describeErrors(validateFixturesFile.errors)}`);
  return data;
}

export class FixturesFileProvisioner implements Provisioner {
  readonly description: string;
  readonly createsRegistrations = false;

  constructor(
    private readonly file: FixturesFile,
    path: string,
    private readonly clock?: Provisioner,
  ) {
    this.description = `fixtures file ${path}${clock ? ` (test clock through the ${clock.description})` : ''}`;
  }

  /** The file was checked when read. */
  async check(): Promise<void> {}

  async create(f: FixtureSet): Promise<ProvisionCreated> {
    const outside = outsideLayout(f);
    if (outside) throw new NotSupported('create', `needs registrations of its own (${outside})`);
    const created: ProvisionCreated = { orgs: {}, apps: {}, agents: {} };
    for (const name of Object.keys(f.apps)) {
      const app = this.file.apps?.[name];
      if (!app) throw new NotSupported('create', `the fixtures file has no app ${name}`);
      created.apps[name] = { app_id: app.app_id, token: app.token };
      created.orgs[f.apps[name]!] = { org_id: app.org_id };
    }
    for (const [name, spec] of Object.entries(f.agents)) {
      const agent = this.file.agents?.[name];
      if (!agent) throw new NotSupported('create', `the fixtures file has no agent ${name}`);
      created.agents[name] = {
        agent_id: agent.agent_id,
        token: agent.token,
        name: agent.name ?? '',
        description: agent.description ?? '',
      };
      created.orgs[spec.org] = { org_id: agent.org_id };
    }
    const unknownOrg = f.orgs.find((o) => !created.orgs[o]);
    if (unknownOrg)
      throw new NotSupported('create', `the fixtures file names no app or agent of organization ${unknownOrg}`);
    return created;
  }

  private cannot(action: ProvisionAction): never {
    throw new NotSupported(action, `a fixtures file cannot ${action.replace('_', ' ')}`);
  }

  async rotate(_kind: ClientKind, _id: string): Promise<string> {
    return this.cannot('rotate');
  }

  async deactivate(_kind: ClientKind, _id: string): Promise<void> {
    this.cannot('deactivate');
  }

  async setAllowlist(_agentId: string, _appIds: string[] | null): Promise<void> {
    this.cannot('set_allowlist');
  }

  async advanceClock(ms: number): Promise<void> {
    if (!this.clock)
      throw new NotSupported('advance_clock', "a fixtures file has no test clock (add --admin-token for the target's)");
    await this.clock.advanceClock(ms);
  }

  async listSessions(_agentId: string): Promise<ProvisionedSession[]> {
    return this.cannot('list_sessions');
  }

  /** Never called (createsRegistrations is false): the registrations were the user's before the run and stay theirs. */
  async cleanup(): Promise<void> {}
}
