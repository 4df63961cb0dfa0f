// `bridge-connector --config FILE --handler MODULE`: runs the agent connector until SIGTERM/SIGINT. Each
// notification (§6.5, and `closed`, `stopped`) is printed on stdout as one JSON line
// `{"type": "<notification>", ...fields, "time": ISO}`; logs go to stderr as JSON lines (json-logger.ts; LOG_LEVEL,
// default info).
// A signal stops with a bounded drain (C8): the events in flight get --drain-timeout to finish, new ones are answered
// at once with AGENT_ERROR, and the `stopped` line names the events the stop had to end; a second signal, a second or
// more after the first, ends the drain at once.
// Exit 0 after a signal (whatever the drain cut short: the `stopped` line says it), and for --help and --version;
// 1 on a usage error (printed with the help), a start-up error (configuration, handler module, an agent refused), or
// when every agent's connection has given up for good.
import { VERSION } from '../../../generated/index.js';
import { systemClock } from '../../shared/clock.js';
import { HELP, parseCliArgs, UsageError, type CliOptions } from './cli-args.js';
import { loadConnectorConfig } from './config.js';
import { Connector } from './connector.js';
import { loadHandler } from './handler.js';
import { jsonLogger } from './json-logger.js';
import { CONNECTOR_NOTIFICATIONS } from './notifications.js';
import { stopOnSignals } from './stop-signals.js';

/** Exits once stdout has taken every notification line written before. */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

async function run(o: CliOptions): Promise<void> {
  const logger = jsonLogger({
    name: 'bridge-connector',
    ...(process.env.LOG_LEVEL ? { level: process.env.LOG_LEVEL } : {}),
  });
  const config = await loadConnectorConfig(o.config);
  const handler = await loadHandler(o.handler);
  const connector = new Connector(config, {
    handler,
    logger,
    ...(o.handlerTimeout !== undefined ? { handlerTimeoutMs: o.handlerTimeout } : {}),
    ...(o.wordsPerToken !== undefined ? { wordsPerFragment: o.wordsPerToken } : {}),
    ...(o.healthHost !== undefined ? { healthHost: o.healthHost } : {}),
    ...(o.drainTimeout !== undefined ? { drainTimeoutMs: o.drainTimeout } : {}),
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
      connector.close().then(
        () => exit(1),
        (err: unknown) => {
          logger.error({ err }, 'closing the connector failed');
          exit(1);
        },
      );
    }
  });

  // on, not once: later signals end the drain (or, within a second of the first, are the same Ctrl-C again).
  const onSignal = stopOnSignals(connector, {
    clock: systemClock,
    logger,
    stopping: (result) => {
      if (stopping) return; // already closing after every connection gave up
      stopping = true;
      result.then(
        () => exit(0),
        (err: unknown) => {
          logger.error({ err }, 'stop failed');
          exit(1);
        },
      );
    },
  });
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    await connector.start();
    started = true;
  } catch (err) {
    if (stopping) return; // a signal during start-up: not a failure
    clearInterval(keepAlive);
    throw err;
  }
  logger.info(
    { agents: connector.agentIds, url: config.connection.url, health: connector.healthUrl },
    'connector running',
  );
}

async function main(): Promise<void> {
  const command = parseCliArgs(process.argv.slice(2));
  if (command.kind === 'run') return run(command.options);
  process.stdout.write(command.kind === 'help' ? HELP : `${VERSION}\n`);
  exit(0);
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) process.stderr.write(`error: ${err.message}\n\n${HELP}`);
  else console.error(`bridge-connector: ${err instanceof Error ? err.message : String(err)}`);
  exit(1);
});
