// `bridge`: run the server (`bridge serve`) or provision it through the admin API from a terminal.
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, ConfigError } from '../config.js';
import { ListenFailure } from '../shared/listen-error.js';
import { ClusterLinkError } from '../cluster/node.js';
import { DatabaseInUseError, DatabaseOpenError, DatabaseUrlError } from '../store/database-errors.js';
import { TlsError } from '../tls.js';
import { ENDPOINT_PATHS, FIELD_BOUNDS, QUERY_PARAMETERS, VERSION } from '../../generated/index.js';
import { AdminApiError, AdminClient, type Query } from './admin-client.js';

const program = new Command('bridge')
  .description('Agent messaging bridge: a WebSocket bridge between apps and AI agents.')
  .version(VERSION, '-V, --version', 'print the version and exit')
  .showHelpAfterError();

program
  .command('serve')
  .description('run the bridge (configuration from the environment: PORT, HOST, DATABASE_URL, ADMIN_TOKEN, ...)')
  .action(async () => {
    const config = loadConfig();
    // Loaded here, not above: the admin commands (a script may run dozens) start without the server's modules,
    // about half a second sooner each.
    const { startServer } = await import('../server.js');
    const running = await startServer(config);
    console.error(
      `bridge listening on ${running.url} (WebSockets: ${running.url.replace(/^http/, 'ws')}${ENDPOINT_PATHS.app} and ${ENDPOINT_PATHS.agent})`,
    );
    if (running.metricsUrl) console.error(`metrics on ${running.metricsUrl} only (METRICS_PORT)`);
    if (!config.adminToken)
      console.error('admin API off: set ADMIN_TOKEN (16+ characters) to provision apps and agents');
    // A signal may come twice: a terminal's Ctrl-C reaches npm and the bridge alike, and npm forwards it once more
    // (`npm start` execs the bridge). The second must not end the process in the middle of the shutdown: the
    // listeners stay, and SHUTDOWN_TIMEOUT_MS bounds the wait.
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.error(`${signal}: shutting down`);
      running.close().then(
        () => {
          console.error('bridge stopped');
          process.exit(0);
        },
        (err: unknown) => {
          console.error(`bridge: the shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

function client(cmd: Command): AdminClient {
  const { url, adminToken } = cmd.optsWithGlobals<{ url: string; adminToken?: string }>();
  return new AdminClient(url, adminToken);
}

function print(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of days, 1 or more');
  return n;
}

function pageLimitHelp(limit: { minimum: number; maximum: number; default: number }): string {
  return `${limit.minimum} to ${limit.maximum} (default ${limit.default})`;
}

interface PageOptions {
  search?: string;
  limit?: string;
  after?: string;
}

/** --search, --limit and --after of a searchable listing (organizations, apps, agents; D11). */
function paged(command: Command, what: 'organizations' | 'apps' | 'agents'): Command {
  const bounds = {
    organizations: QUERY_PARAMETERS.listOrganizations,
    apps: QUERY_PARAMETERS.listApps,
    agents: QUERY_PARAMETERS.listAgents,
  }[what];
  return command
    .option('--search <text>', `only the ${what} whose id or name contains this text (any case)`)
    .option('--limit <n>', `${what} per page, ${pageLimitHelp(bounds.limit)}`)
    .option('--after <id>', 'the next_after of the previous page');
}

const pageQuery = (o: PageOptions): Query => ({ q: o.search, limit: o.limit, after: o.after });

/**
 * Prints the page as JSON on stdout, and on stderr, when more follow, the command that prints the next one: a
 * user who lists without options sees that the list goes on, and a script still reads one JSON document.
 */
function printPage(page: { next_after: string | null }, command: string, o: PageOptions): void {
  print(page);
  if (page.next_after === null) return;
  const kept = [
    o.search !== undefined ? `--search ${JSON.stringify(o.search)}` : '',
    o.limit !== undefined ? `--limit ${o.limit}` : '',
  ].filter(Boolean);
  console.error(`more follow: bridge ${[command, ...kept, `--after ${page.next_after}`].join(' ')}`);
}

// Read from the environment by commander at parse time, never given as a default: a default is printed by --help,
// and the admin token's would be the secret itself.
program
  .addOption(new Option('--url <url>', "the bridge's HTTP base").env('BRIDGE_URL').default('http://127.0.0.1:8080'))
  .addOption(new Option('--admin-token <token>', "the server's ADMIN_TOKEN").env('ADMIN_TOKEN'));

const orgs = program.command('orgs').description('organizations');
paged(orgs.command('list').description('organizations by id, one page at a time'), 'organizations').action(
  async (o: PageOptions, cmd) => printPage(await client(cmd).organizations(pageQuery(o)), 'orgs list', o),
);
orgs.command('create <name>').action(async (name, _o, cmd) => print(await client(cmd).createOrganization(name)));
orgs
  .command('rename <org_id> <name>')
  .description('change its display name; its id, apps and agents stay')
  .action(async (orgId, name, _o, cmd) => print(await client(cmd).renameOrganization(orgId, name)));
orgs
  .command('delete <org_id>')
  .description('remove it with its apps and agents for good: their connections close, their tokens stop working')
  .action(async (orgId, _o, cmd) => print(await client(cmd).deleteOrganization(orgId)));

const apps = program.command('apps').description('apps of an organization');
paged(apps.command('list <org_id>').description('apps by id, one page at a time'), 'apps').action(
  async (orgId: string, o: PageOptions, cmd) =>
    printPage(await client(cmd).apps(orgId, pageQuery(o)), `apps list ${orgId}`, o),
);
apps
  .command('rename <app_id> <name>')
  .description('change its display name; its id, tokens and connections stay')
  .action(async (appId, name, _o, cmd) => print(await client(cmd).renameApp(appId, name)));
apps
  .command('create <org_id> <name>')
  .description('register an app; its token is shown once')
  .action(async (orgId, name, _o, cmd) => print(await client(cmd).createApp(orgId, name)));

apps
  .command('rotate-token <app_id>')
  .description('issue a new token (shown once); the old one works for one more hour')
  .action(async (appId, _o, cmd) => print(await client(cmd).rotateAppToken(appId)));
apps
  .command('deactivate <app_id>')
  .description('close its connections; its tokens then get TOKEN_REVOKED (final)')
  .action(async (appId, _o, cmd) => print(await client(cmd).deactivateApp(appId)));

const agents = program.command('agents').description('agents of an organization');
paged(agents.command('list <org_id>').description('agents by id, one page at a time'), 'agents').action(
  async (orgId: string, o: PageOptions, cmd) =>
    printPage(await client(cmd).agents(orgId, pageQuery(o)), `agents list ${orgId}`, o),
);
agents
  .command('create <org_id> <name>')
  .description('register an agent; its token is shown once')
  .option('--description <text>', 'what the agent does')
  .option(
    '--ttl-days <days>',
    `session TTL in days (default ${FIELD_BOUNDS.AgentCreate.ttl_days.default})`,
    positiveInt,
  )
  .action(async (orgId, name, opts: { description?: string; ttlDays?: number }, cmd) =>
    print(
      await client(cmd).createAgent(orgId, {
        name,
        ...(opts.description !== undefined ? { description: opts.description } : {}),
        ...(opts.ttlDays !== undefined ? { ttl_days: opts.ttlDays } : {}),
      }),
    ),
  );

agents
  .command('update <agent_id>')
  .description('change its name, description or session TTL (the TTL applies to sessions created from now on)')
  .option('--name <name>')
  .option('--description <text>', 'what the agent does ("" for none)')
  .option('--ttl-days <days>', 'session TTL in days for new sessions', positiveInt)
  .action(async (agentId, opts: { name?: string; description?: string; ttlDays?: number }, cmd) => {
    const change = {
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(opts.ttlDays !== undefined ? { ttl_days: opts.ttlDays } : {}),
    };
    if (!Object.keys(change).length)
      cmd.error('bridge: agents update: give at least one of --name, --description, --ttl-days');
    print(await client(cmd).updateAgent(agentId, change));
  });
agents
  .command('rotate-token <agent_id>')
  .description('issue a new token (shown once); the old one works for one more hour')
  .action(async (agentId, _o, cmd) => print(await client(cmd).rotateAgentToken(agentId)));
agents
  .command('deactivate <agent_id>')
  .description('close its connection and end its events; its tokens then get TOKEN_REVOKED (final)')
  .action(async (agentId, _o, cmd) => print(await client(cmd).deactivateAgent(agentId)));

const connections = program.command('connections').description('live WebSocket connections of apps and agents');
connections
  .command('list <org_id>')
  .description(
    "the organization's live connections on every node, each with its connection_id (each app's oldest few, all counted)",
  )
  .action(async (orgId, _o, cmd) => print(await client(cmd).organizationLive(orgId)));
connections
  .command('disconnect <connection_id>')
  .description('close one connection, on whichever node holds it (DISCONNECTED_BY_ADMIN); its client may reconnect')
  .action(async (connectionId, _o, cmd) => print(await client(cmd).disconnect(connectionId)));

program
  .command('events')
  .description('the event log, newest first (never payloads)')
  .option('--org-id <id>', "the events of the organization's apps")
  .option('--app-id <id>')
  .option('--agent-id <id>')
  .option('--status <status>', 'delivered or rejected')
  .option('--code <code>', 'an error code, e.g. AGENT_TIMEOUT')
  .option('--since <time>', 'received at or after this ISO 8601 time, e.g. 2025-02-01T11:00:00Z')
  .option('--until <time>', 'received before this ISO 8601 time')
  .option('--limit <n>', pageLimitHelp(QUERY_PARAMETERS.listEvents.limit))
  .option('--before <event_id>', 'the next_before of the previous page')
  .action(async (o: Record<string, string | undefined>, cmd) =>
    print(
      await client(cmd).events({
        org_id: o.orgId,
        app_id: o.appId,
        agent_id: o.agentId,
        status: o.status,
        code: o.code,
        since: o.since,
        until: o.until,
        limit: o.limit,
        before: o.before,
      }),
    ),
  );

program
  .command('sessions')
  .description('live sessions with their expiry, one page at a time (next page: --after the printed next_after)')
  .option('--app-id <id>')
  .option('--agent-id <id>')
  .option('--limit <n>', `sessions per page, ${pageLimitHelp(QUERY_PARAMETERS.listSessions.limit)}`)
  .option('--after <session_key>', 'the next_after of the previous page')
  .action(async (o: Record<string, string | undefined>, cmd) =>
    print(await client(cmd).sessions({ app_id: o.appId, agent_id: o.agentId, limit: o.limit, after: o.after })),
  );

program
  .command('audit')
  .description(
    'the audit trail of admin changes and dashboard sign-ins, newest first (next page: --before the printed next_before)',
  )
  .option('--limit <n>', `entries per page, ${pageLimitHelp(QUERY_PARAMETERS.listAuditEntries.limit)}`)
  .option('--before <audit_id>', 'the next_before of the previous page')
  .action(async (o: Record<string, string | undefined>, cmd) =>
    print(await client(cmd).audit({ limit: o.limit, before: o.before })),
  );

const allowlist = program.command('allowlist').description("an agent's allowlist");
allowlist
  .command('set <agent_id> <app_ids...>')
  .description('only these apps may use the agent')
  .action(async (agentId, appIds: string[], _o, cmd) => print(await client(cmd).setAllowlist(agentId, appIds)));
allowlist
  .command('clear <agent_id>')
  .description('remove the allowlist: every app of the organization may use the agent')
  .action(async (agentId, _o, cmd) => print(await client(cmd).setAllowlist(agentId, null)));

const OURS = [
  AdminApiError,
  ConfigError,
  DatabaseUrlError,
  DatabaseOpenError,
  DatabaseInUseError,
  ListenFailure,
  TlsError,
  ClusterLinkError,
];

// Every failure is one line on stderr and exit 1, as a service manager shows it. Errors we did not foresee keep
// their stack for whoever asked for detail (LOG_LEVEL=debug or trace).
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ');
program.parseAsync().catch((err: unknown) => {
  if (OURS.some((kind) => err instanceof kind)) {
    console.error(`bridge: ${oneLine((err as Error).message)}`);
  } else if (['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '')) {
    console.error(err);
  } else {
    const code = (err as { code?: unknown }).code;
    console.error(
      `bridge: ${oneLine(err instanceof Error ? err.message : String(err))}${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }
  process.exit(1);
});
