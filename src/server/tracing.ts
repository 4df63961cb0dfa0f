// Event traces as a service (O17): started before the core, so every event it accepts is traced; stopped after it,
// so the spans of the events the shutdown ended are exported before the process exits. The SDK is loaded only when
// a collector is named.
import type { TracingConfig } from '../config.js';
import type { Tracing } from '../ops/tracing.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { Service } from './services.js';

export function eventTracing(
  config: TracingConfig | undefined,
  deps: { clock: Clock; log: Logger; nodeId: string },
): Service<Tracing | undefined> {
  return {
    name: 'event tracing',
    start: async () => (config ? (await import('../ops/tracing.js')).startTracing(config, deps) : undefined),
    stop: (tracing) => tracing?.close(),
  };
}
