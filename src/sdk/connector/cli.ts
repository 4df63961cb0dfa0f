// `bridge-connector --config FILE --handler MODULE`: runs the agent connector until SIGTERM/SIGINT. Each
// notification (§6.5) is printed on stdout as one JSON line `{"type": "<notification>", ...fields, "time": ISO}`;
// logs go to stderr as JSON lines (pino). Exit 0 after a signal; 1 on a start-up error (configuration, handler
// module, an agent refused), or when every agent's connection has given up for good.
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { loadConnectorConfig } from './config.js';
import { Connector } from './connector.js';
import { loadHandler } from './handler.js';
import { CONNECTOR_NOTIFICATIONS } from './notifications.js';

/** Exits once stdout has taken every notification line written before. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number, 1 or more');
  return n;
}

interface Options {
  config: string;
  handler: string;
  handlerTimeout?: number;
  wordsPerToken?: number;
  healthHost?: string;
}

const program = new Command('bridge-connector')
  .description('Agent connector: keeps one connection per configured agent to the bridge and hands each event to a handler module.')
  .requiredOption('-c, --config <file>', 'connector configuration, JSON or YAML (§2.6); ${VAR} references are read from the environment')
  .requiredOption('-H, --handler <module>', 'module (path from the working directory, .ts or .js) whose default export or `handle` handles each event')
  .option('--handler-timeout <ms>', 'end an unanswered event with AGENT_TIMEOUT after this long (default: the bridge timeout minus 5 s)', positiveInt)
  .option('--words-per-token <n>', 'words per fragment of ctx.stream() (default 3)', positiveInt)
  .option('--health-host <host>', 'interface of the health endpoint, over health.host of the configuration (default 127.0.0.1; 0.0.0.0 for all)')
  .showHelpAfterError()
  .action(async (o: Options) => {
    const logger = pino({ name: 'bridge-connector', level: process.env.LOG_LEVEL || 'info' }, pino.destination({ dest: 2, sync: true }));
    const config = await loadConnectorConfig(o.config);
    const handler = await loadHandler(o.handler);
    const connector = new Connector(config, {
      handler,
      logger,
      ...(o.handlerTimeout !== undefined ? { handlerTimeoutMs: o.handlerTimeout } : {}),
      ...(o.wordsPerToken !== undefined ? { wordsPerFragment: o.wordsPerToken } : {}),
      ...(o.healthHost !== undefined ? { healthHost: o.healthHost } : {}),
    });

    let stopping = false;
    let started = false;
    const gaveUp = new Set<string>();
    // The connection's timers do not hold the process open (they are unref'd); during a reconnect backoff no
    // socket does either. Stay alive until a signal or giving up.
    const keepAlive = setInterval(() => {}, 2 ** 30);
    for (const name of CONNECTOR_NOTIFICATIONS) {
      connector.on(name, (fields: object) => {
        process.stdout.write(`${JSON.stringify({ type: name, ...fields, time: new Date().toISOString() })}\n`);
      });
    }
    connector.on('closed', ({ agentId }) => {
      gaveUp.add(agentId);
      if (started && !stopping && gaveUp.size === connector.agentIds.length) {
        logger.error({}, 'every agent connection has given up; exiting');
        stopping = true;
        connector.close().finally(() => exit(1));
      }
    });

    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'closing connections');
      connector.close().then(
        () => exit(0),
        (err: unknown) => {
          logger.error({ err }, 'close failed');
          exit(1);
        },
      );
    };
    // on, not once: a second signal (Ctrl-C twice, or one a parent such as npm forwards as well) must not kill mid-close.
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);

    try {
      await connector.start();
      started = true;
    } catch (err) {
      if (stopping) return; // a signal during start-up: not a failure
      clearInterval(keepAlive);
      throw err;
    }
    logger.info({ agents: connector.agentIds, url: config.connection.url, health: connector.healthUrl }, 'connector running');
  });

program.parseAsync().catch((err: unknown) => {
  console.error(`bridge-connector: ${err instanceof Error ? err.message : String(err)}`);
  exit(1);
});
