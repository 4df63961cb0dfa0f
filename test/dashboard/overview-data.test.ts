// The overview's arithmetic (D8), without a browser: samples held between polls, asked for with `after`, trimmed
// to the window, and several nodes added up (counts and gauges summed, p50 weighted by replies, p99 the largest).
import { expect } from 'chai';
import type { Overview, OverviewSample } from '../../generated/index.js';

// A page module (plain JS, no types): loaded by address so that TypeScript takes it as it is.
const MODULE = new URL('../../src/dashboard/assets/overview-data.js', import.meta.url).href;
const { OverviewHistory, errorsSince } = await import(MODULE);

const SAMPLE_MS = 5_000;
const WINDOW_MS = 60_000;
const T0 = Date.parse('2026-11-22T12:00:00.000Z');

function sample(at: number, fields: Partial<OverviewSample> = {}): OverviewSample {
  return {
    at,
    app_connections: 0,
    agent_connections: 0,
    events_in_flight: 0,
    accepted: 0,
    rejected: 0,
    fragments: 0,
    replied: 0,
    errors: {},
    latency_p50_ms: null,
    latency_p99_ms: null,
    ...fields,
  };
}

function overview(at: number, nodes: Record<string, OverviewSample[]>, missing: string[] = []): Overview {
  const now = { app_connections: 1, agent_connections: 1, apps_online: 1, agents_online: 1, events_in_flight: 0 };
  return {
    at,
    sample_ms: SAMPLE_MS,
    window_ms: WINDOW_MS,
    nodes: Object.entries(nodes).map(([node_id, samples]) => ({ node_id, now, samples })),
    missing_nodes: missing,
  };
}

describe('dashboard overview arithmetic', function () {
  it("keeps one node's samples as they are, asks only for newer ones, and forgets those older than the window", function () {
    const history = new OverviewHistory();
    expect(history.after(), 'nothing held: ask for everything').to.equal(undefined);
    history.add(
      overview(T0 + 10_000, { a: [sample(T0 + 5_000, { accepted: 3 }), sample(T0 + 10_000, { accepted: 4 })] }),
    );
    expect(history.after()).to.equal(T0 + 10_000);
    history.add(
      overview(T0 + 15_000, { a: [sample(T0 + 10_000, { accepted: 4 }), sample(T0 + 15_000, { accepted: 5 })] }),
    );
    expect(
      history.sum().map((s: OverviewSample) => s.accepted),
      'a repeated sample is taken once',
    ).to.deep.equal([3, 4, 5]);

    history.add(overview(T0 + 5_000 + WINDOW_MS, { a: [sample(T0 + 5_000 + WINDOW_MS, { accepted: 6 })] }));
    expect(
      history.sum().map((s: OverviewSample) => s.at),
      'the sample of T0+5s is out of the window',
    ).to.deep.equal([T0 + 10_000, T0 + 15_000, T0 + 5_000 + WINDOW_MS]);
  });

  it('adds several nodes up interval by interval: counts and gauges summed, p50 weighted by replies, p99 the largest', function () {
    const history = new OverviewHistory();
    history.add(
      overview(T0 + 10_000, {
        a: [
          sample(T0 + 5_000, {
            accepted: 2,
            replied: 1,
            latency_p50_ms: 100,
            latency_p99_ms: 300,
            app_connections: 2,
            errors: { AGENT_OFFLINE: 1 },
          }),
        ],
        // b's timer ticks 2 s later than a's: its sample of the same interval still adds up with a's.
        b: [
          sample(T0 + 7_000, {
            accepted: 5,
            replied: 3,
            latency_p50_ms: 200,
            latency_p99_ms: 250,
            app_connections: 3,
            errors: { AGENT_OFFLINE: 2, AGENT_TIMEOUT: 1 },
          }),
        ],
      }),
    );
    const [sum] = history.sum();
    expect(sum).to.deep.include({
      at: T0 + 7_000,
      accepted: 7,
      replied: 4,
      app_connections: 5,
      latency_p50_ms: 175,
      latency_p99_ms: 300,
    });
    expect(sum.errors).to.deep.equal({ AGENT_OFFLINE: 3, AGENT_TIMEOUT: 1 });
    expect(history.now()).to.deep.equal({
      app_connections: 2,
      agent_connections: 2,
      apps_online: 2,
      agents_online: 2,
      events_in_flight: 0,
    });
    expect(history.after(), "the oldest of the nodes' newest, so neither misses a sample").to.equal(T0 + 5_000);
    expect(errorsSince(history.sum(), T0)).to.deep.equal([
      ['AGENT_OFFLINE', 3],
      ['AGENT_TIMEOUT', 1],
    ]);
    expect(errorsSince(history.sum(), T0 + 7_000)).to.deep.equal([]);
  });

  it('leaves a node without replies out of the latency, and asks a node that has no sample yet for all of them', function () {
    const history = new OverviewHistory();
    history.add(
      overview(T0 + 5_000, {
        a: [sample(T0 + 5_000, { replied: 2, latency_p50_ms: 80, latency_p99_ms: 90 })],
        b: [sample(T0 + 5_000)],
        c: [],
      }),
    );
    expect(history.sum()[0]).to.deep.include({ latency_p50_ms: 80, latency_p99_ms: 90 });
    expect(history.after()).to.equal(undefined);
  });
});
