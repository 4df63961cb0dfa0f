// Provisioning through a third party's own command (--provision "CMD"), run through the shell (schemas in
// spec/conformance.yaml). The first request asks it whether it speaks lines mode (BRIDGE_PROVISION_LINES=1): if it
// does, one process answers every later request of the run (command-lines.ts); if not, it is run once per request as
// it always was (command-once.ts), exit 3 = not supported.
import {
  describeErrors,
  validateProvisionCreated,
  validateProvisionDone,
  validateProvisionSessions,
  validateProvisionToken,
  type ClientKind,
  type FixtureSet,
  type ProvisionCreated,
  type ProvisionedSession,
  type Validator,
} from '../../generated/index.js';
import { LinesSession } from './command-lines.js';
import { runOnce } from './command-once.js';
import { REQUEST_TIMEOUT_MS, type Reply } from './command-reply.js';
import { NotSupported, ProvisionError, type ProvisionAction, type Provisioner } from './provisioner.js';

export class CommandProvisioner implements Provisioner {
  readonly description: string;
  readonly createsRegistrations = true;

  /** `timeoutMs`: how long one request may take (a slow answer fails that request and stops the command). */
  constructor(
    private readonly command: string,
    private readonly timeoutMs = REQUEST_TIMEOUT_MS,
  ) {
    this.description = `provisioning command \`${command}\``;
  }

  /** Unknown until the first request has been answered. */
  private lines: boolean | undefined;
  private session: LinesSession | undefined;

  /** One request, in the command's mode; the first also learns the mode. */
  private async send(action: ProvisionAction, request: Record<string, unknown>): Promise<Reply> {
    if (!this.lines) {
      const { reply, lines } = await runOnce(
        this.command,
        action,
        JSON.stringify(request),
        this.lines === undefined,
        this.timeoutMs,
      );
      this.lines ??= lines;
      return reply;
    }
    const unreported = this.session?.unreported;
    if (this.session?.broken) this.session = undefined;
    if (unreported) throw new ProvisionError(unreported);
    this.session ??= new LinesSession(this.command, this.timeoutMs);
    return this.session.request(action, request);
  }

  private async ask<T>(
    action: ProvisionAction,
    request: Record<string, unknown>,
    validate: Validator<T>,
    answerName: string,
  ): Promise<T> {
    const reply = await this.send(action, { action, ...request });
    if ('unsupported' in reply)
      throw new NotSupported(
        action,
        `the provisioning command does not support ${action}${reply.unsupported.trim() ? `: ${reply.unsupported}` : ''}`,
      );
    if ('error' in reply) {
      const exit = reply.exit !== undefined ? ` (exit ${reply.exit})` : '';
      throw new ProvisionError(
        `the provisioning command failed on ${action}${exit}${reply.error.trim() ? `: ${reply.error}` : ''}`,
      );
    }
    if (!validate(reply.answer))
      throw new ProvisionError(
        `the provisioning command's answer to ${action} is not a ${answerName}: ${describeErrors(validate.errors)}`,
      );
    return reply.answer;
  }

  /** Ends the lines session, if there is one (the command exits at the end of its input). */
  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }

  async check(): Promise<void> {
    await this.create({ orgs: [], apps: {}, agents: {} });
  }

  async create(fixtures: FixtureSet): Promise<ProvisionCreated> {
    const created = await this.ask('create', { fixtures }, validateProvisionCreated, 'ProvisionCreated');
    const missing = [
      ...fixtures.orgs.filter((n) => !created.orgs[n]).map((n) => `orgs.${n}`),
      ...Object.keys(fixtures.apps)
        .filter((n) => !created.apps[n])
        .map((n) => `apps.${n}`),
      ...Object.keys(fixtures.agents)
        .filter((n) => !created.agents[n])
        .map((n) => `agents.${n}`),
    ];
    if (missing.length)
      throw new ProvisionError(`the provisioning command's answer to create lacks ${missing.join(', ')}`);
    return created;
  }

  async rotate(kind: ClientKind, id: string): Promise<string> {
    return (await this.ask('rotate', { kind, id }, validateProvisionToken, 'ProvisionToken')).token;
  }

  async deactivate(kind: ClientKind, id: string): Promise<void> {
    await this.ask('deactivate', { kind, id }, validateProvisionDone, 'ProvisionDone');
  }

  async setAllowlist(agentId: string, appIds: string[] | null): Promise<void> {
    await this.ask('set_allowlist', { agent_id: agentId, app_ids: appIds }, validateProvisionDone, 'ProvisionDone');
  }

  async advanceClock(ms: number): Promise<void> {
    await this.ask('advance_clock', { ms }, validateProvisionDone, 'ProvisionDone');
  }

  async listSessions(agentId: string): Promise<ProvisionedSession[]> {
    return (await this.ask('list_sessions', { agent_id: agentId }, validateProvisionSessions, 'ProvisionSessions'))
      .sessions;
  }

  /** The run's last request: the lines session ends after it (a later request would start another). */
  async cleanup(orgIds: string[]): Promise<void> {
    try {
      await this.ask('cleanup', { org_ids: orgIds }, validateProvisionDone, 'ProvisionDone');
    } finally {
      await this.close();
    }
  }
}
