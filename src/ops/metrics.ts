// Prometheus metrics (prom-client). Gauges and the token counter are read from the bridge when scraped, so
// nothing is counted twice on the per-message path; events are counted as they end.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Bridge } from '../core/bridge.js';
import type { BridgeObserver } from '../core/observer.js';

export interface Metrics {
  registry: Registry;
  observer: BridgeObserver;
}

export function makeMetrics(bridge: () => Bridge, pendingRows: () => number): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'bridge_connections',
    help: 'Open WebSocket connections by client kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const stats = bridge().stats();
      this.set({ kind: 'app' }, stats.apps);
      this.set({ kind: 'agent' }, stats.agents);
    },
  });
  new Gauge({
    name: 'bridge_events_in_flight',
    help: 'Accepted events waiting for their reply or error.',
    registers: [registry],
    collect() {
      this.set(bridge().stats().eventsInFlight);
    },
  });
  let reported = 0;
  new Counter({
    name: 'bridge_tokens_forwarded_total',
    help: 'Token fragments forwarded from agents to apps.',
    registers: [registry],
    collect() {
      const now = bridge().tokensForwarded();
      this.inc(now - reported);
      reported = now;
    },
  });
  new Gauge({
    name: 'bridge_event_log_pending_rows',
    help: 'Event log and session changes queued for the next group commit.',
    registers: [registry],
    collect() {
      this.set(pendingRows());
    },
  });
  const events = new Counter({
    name: 'bridge_events_total',
    help: 'App events by status (delivered, rejected) and outcome (as in the event log).',
    labelNames: ['status', 'outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'bridge_event_latency_seconds',
    help: 'End-to-end latency of replied events, from the app event to the reply.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const nothing = () => {};
  return {
    registry,
    observer: {
      eventRejected: () => events.inc({ status: 'rejected', outcome: 'rejected' }),
      eventAccepted: nothing,
      eventEnded(e) {
        events.inc({ status: 'delivered', outcome: e.outcome });
        if (e.outcome === 'replied') latency.observe(e.latency_ms / 1000);
      },
      sessionOpened: nothing,
    },
  };
}
