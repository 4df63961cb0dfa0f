// The OpenTelemetry SDK behind the event traces (O17), made only when a collector is named: a bridge without one
// never loads it (server.ts imports this module on demand), so tracing off costs a branch per event step. Spans are
// batched and exported over OTLP/HTTP (JSON). The spans held (ended, not yet exported or given up) are bounded here
// rather than by the SDK's queue, which tells its drops only once a later span fits: a span over the bound is dropped
// at once, counted and logged a burst at a time; failed exports are counted, and OpenTelemetry's own diagnostics
// (warn and above) go to the log.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config.js';
import { diag, DiagLogLevel, TraceFlags, type Context, type DiagLogger } from '@opentelemetry/api';
import { BurstLog, LOG_WINDOW_MS } from '../core/burst-log.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { eventTraces, type EventTraces } from './event-traces.js';

/** Spans since start, by what became of them (bridge_trace_spans_total). */
export interface SpanCounts {
  exported: number;
  /** Sent and refused, or not sent (the collector unreachable): gone. */
  failed: number;
  /** Ended while OTEL_BSP_MAX_QUEUE_SIZE spans were held. */
  dropped: number;
}

export interface Tracing extends EventTraces {
  counts: SpanCounts;
  /** Exports what is queued and stops. */
  close(): Promise<void>;
}

/**
 * Whether to trace the next event, decided on its home before any span is made: an event not traced costs one random
 * number (a span that records nothing still cost its ids and the sampler: 16% of the event path at a ratio of 0.1).
 * Events are the roots of their traces (nothing reaches the bridge with a parent), so the ratio samplers and their
 * parent-based forms decide alike; the spans of other nodes follow the home's decision.
 */
export function sampledOf(config: Pick<TracingConfig, 'sampler' | 'ratio'>): () => boolean {
  if (!config.sampler.endsWith('traceidratio') || config.ratio >= 1) return () => true;
  const { ratio } = config;
  return () => Math.random() < ratio;
}

/** Spans ended and not yet exported or given up: what the bridge holds for the collector. */
class HeldSpans {
  held = 0;
  constructor(
    private readonly counts: SpanCounts,
    private readonly max: number,
    private readonly drops: BurstLog<'dropped'>,
  ) {}

  /** Whether one more span may be held; counts and logs the drop when not. */
  take(): boolean {
    if (this.held >= this.max) {
      this.counts.dropped++;
      this.drops.record('dropped');
      return false;
    }
    this.held++;
    return true;
  }

  /** Spans the exporter is done with, sent or not. */
  done(spans: number, sent: boolean): void {
    this.held -= spans;
    if (sent) this.counts.exported += spans;
    else this.counts.failed += spans;
  }
}

/** Tells `held` what the exporter it wraps sent, and what it could not. */
function counting(exporter: SpanExporter, held: HeldSpans): SpanExporter {
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        held.done(spans.length, result.code === ExportResultCode.SUCCESS);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/** The batch processor behind the bound: a span it is given always fits its queue (as large as the bound). */
function bounded(processor: SpanProcessor, held: HeldSpans): SpanProcessor {
  return {
    onStart: (span: Span, context: Context) => processor.onStart(span, context),
    onEnd(span: ReadableSpan) {
      if (span.spanContext().traceFlags & TraceFlags.SAMPLED && held.take()) processor.onEnd(span);
    },
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
}

/** OpenTelemetry's diagnostics, warn and above, as the bridge's log lines. */
function diagnostics(log: Logger): DiagLogger {
  const say = (message: string, ...args: unknown[]) =>
    log.warn({ detail: args.map(String).join(' ') || undefined }, `tracing: ${message}`);
  const nothing = () => {};
  return { error: say, warn: say, info: nothing, debug: nothing, verbose: nothing };
}

export function startTracing(config: TracingConfig, deps: { clock: Clock; log: Logger; nodeId: string }): Tracing {
  const counts: SpanCounts = { exported: 0, failed: 0, dropped: 0 };
  const { clock, log } = deps;
  // The diagnostics logger is the process's (the API keeps one): the last bridge started in a process has it.
  diag.setLogger(diagnostics(log), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const drops = new BurstLog<'dropped'>({
    clock,
    windowMs: LOG_WINDOW_MS,
    report: (_counts, total) =>
      log.warn(
        { dropped: total, max: config.maxQueueSize },
        `tracing: ${total} spans dropped: OTEL_BSP_MAX_QUEUE_SIZE spans were waiting for the collector`,
      ),
  });
  const held = new HeldSpans(counts, config.maxQueueSize, drops);
  const processor = new BatchSpanProcessor({
    exporter: counting(new OTLPTraceExporter({ url: config.url }), held),
    maxQueueSize: config.maxQueueSize,
    maxExportBatchSize: Math.min(512, config.maxQueueSize),
    scheduledDelayMillis: config.scheduleDelayMs,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.instance.id': deps.nodeId }),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [bounded(processor, held)],
  });
  const traces = eventTraces(provider.getTracer('agent-messaging-bridge'), clock, deps.nodeId, sampledOf(config));
  log.info({ url: config.url, sampler: config.sampler, ratio: config.ratio }, 'tracing events to an OTLP collector');
  const close = async () => {
    await provider.shutdown();
    drops.flush();
  };
  return { ...traces, counts, close };
}
