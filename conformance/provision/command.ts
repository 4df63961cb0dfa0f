// Provisioning through a third party's own command (--provision "CMD"): run through the shell once per request,
// one JSON request on stdin, one JSON answer on stdout (schemas in spec/conformance.yaml). Exit 3 = not supported.
import { spawn } from 'node:child_process';
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
import { NotSupported, ProvisionError, type ProvisionAction, type Provisioner } from './provisioner.js';

const NOT_SUPPORTED_EXIT = 3;
const TIMEOUT_MS = 60_000;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, input: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, stdio: ['pipe', 'pipe', 'pipe'], env: process.env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // a command that never reads its request still answers
    child.stdin.end(input);
  });
}

const lastLine = (text: string) => text.trim().split('\n').pop()?.slice(0, 300) ?? '';

export class CommandProvisioner implements Provisioner {
  readonly description: string;
  readonly createsRegistrations = true;

  constructor(private readonly command: string) {
    this.description = `provisioning command \`${command}\``;
  }

  private async ask<T>(
    action: ProvisionAction,
    request: Record<string, unknown>,
    validate: Validator<T>,
    answerName: string,
  ): Promise<T> {
    const outcome = await run(this.command, JSON.stringify({ action, ...request }));
    if (outcome.code === NOT_SUPPORTED_EXIT) {
      throw new NotSupported(
        action,
        `the provisioning command does not support ${action}${outcome.stderr.trim() ? `: ${lastLine(outcome.stderr)}` : ''}`,
      );
    }
    if (outcome.code !== 0) {
      throw new ProvisionError(
        `the provisioning command failed on ${action} (exit ${outcome.code})${outcome.stderr.trim() ? `: ${lastLine(outcome.stderr)}` : ''}`,
      );
    }
    let answer: unknown;
    try {
      answer = JSON.parse(outcome.stdout);
    } catch {
      throw new ProvisionError(
        `the provisioning command's answer to ${action} is not one JSON value: ${outcome.stdout.slice(0, 200)}`,
      );
    }
    if (!validate(answer))
      throw new ProvisionError(
        `the provisioning command's answer to ${action} is not a ${answerName}: ${describeErrors(validate.errors)}`,
      );
    return answer;
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

  async cleanup(orgIds: string[]): Promise<void> {
    await this.ask('cleanup', { org_ids: orgIds }, validateProvisionDone, 'ProvisionDone');
  }
}
