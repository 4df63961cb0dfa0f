// The load generator of bench/run.ts, in its own process (never inside a server's). One scenario per run, its
// configuration as JSON in BENCH_LOAD_CONFIG (or --config); progress on stderr, the result as the last stdout line:
// `RESULT {json}`.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { runAbuse, type AbuseConfig } from './load/abuse.js';
import { runCanary, type CanaryConfig } from './load/canary.js';
import { runEvents, type EventsConfig } from './load/events.js';
import { runHeld, type HeldConfig } from './load/held.js';
import { runIdle, type IdleConfig } from './load/idle.js';
import { runStreaming, type StreamingConfig } from './load/streaming.js';

export type LoadConfig = StreamingConfig | HeldConfig | EventsConfig | IdleConfig | AbuseConfig | CanaryConfig;

async function run(cfg: LoadConfig): Promise<unknown> {
  switch (cfg.scenario) {
    case 'streaming':
      return runStreaming(cfg);
    case 'held':
      return runHeld(cfg);
    case 'events':
      return runEvents(cfg);
    case 'idle':
      return runIdle(cfg);
    case 'abuse':
      return runAbuse(cfg);
    case 'canary':
      return runCanary(cfg);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  const config = values.config ?? process.env.BENCH_LOAD_CONFIG;
  if (!config) throw new Error('--config <json> (or BENCH_LOAD_CONFIG) is required');
  const result = await run(JSON.parse(config) as LoadConfig);
  console.log(`RESULT ${JSON.stringify(result)}`);
  process.exit(0);
}
