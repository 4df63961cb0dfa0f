// What watches the bridge: the event log's recorder, the Prometheus metrics and the overview's ring. They are made
// before the bridge, which tells them of its events as they happen, and read the bridge's gauges once it exists.
import type { Bridge } from '../core/bridge.js';
import { fanOut, type BridgeObserver } from '../core/observer.js';
import type { SessionTable } from '../core/sessions.js';
import { makeMetrics, type Metrics } from '../ops/metrics.js';
import { bridgeGauges, OverviewRing } from '../ops/overview-ring.js';
import type { Clock } from '../shared/clock.js';
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
}): Observers {
  let watched: Bridge | undefined;
  const bridge = () => watched!;
  const metrics = makeMetrics(
    bridge,
    deps.writer,
    () => deps.sessions.size,
    () => deps.unauthenticated.stats(),
  );
  const overview = new OverviewRing({ clock: deps.clock, gauges: bridgeGauges(bridge) });
  return {
    metrics,
    overview,
    observer: fanOut(eventRecorder(deps.writer), metrics.observer, overview.observer),
    watch: (b) => void (watched = b),
  };
}
