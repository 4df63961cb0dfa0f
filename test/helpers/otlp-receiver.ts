// An OTLP/HTTP collector in the test's process: takes what an exporter POSTs to /v1/traces (OTLP JSON) and keeps the
// spans, flattened, for a test to read.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TracingConfig } from '../../src/config.js';

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  /** The span's attributes, each as its one value. */
  attributes: Record<string, unknown>;
  /** The resource's `service.instance.id` (the node). */
  instance: unknown;
  startMs: number;
  endMs: number;
  status: number | undefined;
}

export interface OtlpReceiver {
  /** The URL to give OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Answers no export until `answer()`: the exporter's requests wait, as with a slow collector. */
  stall(): void;
  answer(): void;
  close(): Promise<void>;
}

type Value = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: Value) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: { key: string; value: Value }[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let stalled: (() => void)[] | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      for (const rs of body.resourceSpans ?? []) {
        const instance = attributesOf(rs.resource?.attributes)['service.instance.id'];
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              attributes: attributesOf(s.attributes),
              instance,
              startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
              endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
              status: s.status?.code,
            });
      }
      const ok = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      if (stalled) stalled.push(ok);
      else ok();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    stall: () => void (stalled ??= []),
    answer() {
      const waiting = stalled ?? [];
      stalled = undefined;
      for (const ok of waiting) ok();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A bridge's tracing settings toward `url`, exporting every 20 ms. */
export const tracingTo = (url: string, more: Partial<TracingConfig> = {}): TracingConfig => ({
  url,
  serviceName: 'bridge-under-test',
  sampler: 'parentbased_always_on',
  ratio: 1,
  maxQueueSize: 2048,
  scheduleDelayMs: 20,
  ...more,
});
