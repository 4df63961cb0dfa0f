// Each event's life as OpenTelemetry spans, keyed by event_id (O17): `bridge.event` on its home node from the app's
// frame to its end, and as its children `bridge.deliver` (where it is handed to the agent's connection: another node
// continues the trace from the `traceparent` the home sent with it), `bridge.first_fragment` (from the app's frame to
// the first fragment forwarded: the wait for the first token) and `bridge.stream` (from that fragment to the end).
// Only ids, codes, sizes and times become attributes: nothing is read from or written into the payload. Spans take
// their times from the bridge's clock, like the event log.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { BridgeObserver, EventEnd } from '../core/observer.js';
import type { Clock } from '../shared/clock.js';

export interface EventTraces {
  observer: BridgeObserver;
  /** The `traceparent` of an event held here and traced, to send with it to its agent's node. */
  traceparentOf(eventId: string): string | undefined;
}

/** An event traced on its home node, until it ends: as many as events in flight (L23). */
interface Traced {
  span: Span;
  context: Context;
  traceparent: string | undefined;
  /** When the app's frame arrived (epoch ms, the bridge's clock). */
  receivedAt: number;
  /** The span from the first fragment to the end, once a fragment was forwarded. */
  stream?: Span;
}

const propagator = new W3CTraceContextPropagator();

/** `sampled`: whether to trace the next event accepted here (the sampling decision, made before any span). */
export function eventTraces(
  tracer: Tracer,
  clock: Clock,
  nodeId: string,
  sampled: () => boolean = () => true,
): EventTraces {
  const held = new Map<string, Traced>();
  const node = { 'bridge.node': nodeId };

  function traceparentOf(context: Context): string | undefined {
    const carrier: { traceparent?: string } = {};
    propagator.inject(context, carrier, defaultTextMapSetter);
    return carrier.traceparent;
  }

  function ended(e: EventEnd): void {
    const t = held.get(e.event_id);
    if (!t) return;
    held.delete(e.event_id);
    const now = clock.now();
    t.stream?.end(now);
    t.span.setAttributes({ 'bridge.outcome': e.outcome, 'bridge.tokens_used': e.tokens_used ?? 0 });
    if (e.code) {
      t.span.setAttribute('bridge.error_code', e.code);
      t.span.setStatus({ code: SpanStatusCode.ERROR, message: e.code });
    }
    t.span.end(now);
  }

  const observer: BridgeObserver = {
    eventRejected() {},
    eventAccepted(e) {
      if (!sampled()) return;
      const attributes = {
        ...node,
        'bridge.event_id': e.event_id,
        'bridge.app_id': e.app_id,
        'bridge.agent_id': e.agent_id,
        'bridge.payload_bytes': e.payload_bytes,
      };
      const span = tracer.startSpan('bridge.event', { kind: SpanKind.SERVER, startTime: e.received_at, attributes });
      const context = trace.setSpan(ROOT_CONTEXT, span);
      held.set(e.event_id, { span, context, traceparent: traceparentOf(context), receivedAt: e.received_at });
    },
    eventDelivered(d) {
      const home = held.get(d.event_id);
      const parent = home
        ? home.context
        : d.traceparent && propagator.extract(ROOT_CONTEXT, { traceparent: d.traceparent }, defaultTextMapGetter);
      if (!parent) return; // not traced by its home
      const now = clock.now();
      const attributes = { ...node, 'bridge.event_id': d.event_id, 'bridge.agent_id': d.agent_id };
      const span = tracer.startSpan('bridge.deliver', { kind: SpanKind.PRODUCER, startTime: now, attributes }, parent);
      span.end(now);
    },
    eventFirstFragment(eventId) {
      const t = held.get(eventId);
      if (!t) return;
      const now = clock.now();
      const attributes = { ...node, 'bridge.event_id': eventId };
      tracer.startSpan('bridge.first_fragment', { startTime: t.receivedAt, attributes }, t.context).end(now);
      t.stream = tracer.startSpan('bridge.stream', { startTime: now, attributes }, t.context);
    },
    eventEnded: ended,
    sessionOpened() {},
    sessionEvicted() {},
  };
  return { observer, traceparentOf: (eventId) => held.get(eventId)?.traceparent };
}
