// What watches the bridge: the event log's recorder, the Prometheus metrics, the overview's ring and, at debug
// level, a log line per step of each event. They are made
// before the bridge, which tells them of its events as they happen, and read the bridge's gauges once it exists.
import type { Bridge } from '../core/bridge.js';
import { fanOut, type BridgeObserver } from '../core/observer.js';
import type { SessionTable } from '../core/sessions.js';
import { countedByLabel, makeMetrics, type Metrics } from '../ops/metrics.js';
import type { Tracing } from '../ops/tracing.js';
import { bridgeGauges, OverviewRing } from '../ops/overview-ring.js';
import { eventLines } from '../ops/event-lines.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { eventRecorder } from '../store/event-recorder.js';
import type { WriteBehind } from '../store/write-behind.js';
import type { UnauthenticatedConnections } from '../ws/unauthenticated.js';

export interface Observers {
  metrics: Metrics;
  overview: OverviewRing;
  /** What the bridge tells of its events. */
  observer: BridgeObserver;
  /** Gives them the bridge to read (its gauges are read when scraped or sampled, never before it exists). */
  watch(bridge: Bridge): void;
}

export function observers(deps: {
  writer: WriteBehind;
  sessions: SessionTable;
  unauthenticated: UnauthenticatedConnections;
  clock: Clock;
  /** Where each event's steps are logged, at debug level; undefined when debug lines are off. */
  eventSteps: Logger | undefined;
  /** Each event's spans, when tracing is on. */
  tracing: Tracing | undefined;
}): Observers {
  let watched: Bridge | undefined;
  const bridge = () => watched!;
  const metrics = makeMetrics(
    bridge,
    deps.writer,
    () => deps.sessions.size,
    () => deps.unauthenticated.stats(),
  );
  const { tracing } = deps;
  if (tracing) {
    const help =
      'Spans of event traces by result: exported, failed (the collector refused them or was not reached), dropped (ended while OTEL_BSP_MAX_QUEUE_SIZE spans waited; O17).';
    countedByLabel(metrics.registry, 'bridge_trace_spans_total', help, 'result', () => ({ ...tracing.counts }));
  }
  const overview = new OverviewRing({ clock: deps.clock, gauges: bridgeGauges(bridge) });
  return {
    metrics,
    overview,
    observer: fanOut(
      eventRecorder(deps.writer),
      metrics.observer,
      overview.observer,
      ...(deps.eventSteps ? [eventLines(deps.eventSteps, deps.clock)] : []),
      ...(deps.tracing ? [deps.tracing.observer] : []),
    ),
    watch: (b) => void (watched = b),
  };
}
