// The overview ring (D8): a sample every overviewSampleMs on the bridge's clock, aligned to the interval, with
// the gauges at its end and the counts and latency percentiles of its interval; an hour of them at most.
import { expect } from 'chai';
import { LIMITS, validateOverviewSample, type OverviewNow } from '../../generated/index.js';
import type { EventEnd, EventStart } from '../../src/core/observer.js';
import { LATENCIES_PER_SAMPLE, OverviewRing } from '../../src/ops/overview-ring.js';
import { AdjustableClock } from '../../src/shared/clock.js';

const SAMPLE = LIMITS.overviewSampleMs;
const START = Date.parse('2026-11-22T12:00:00.000Z');

function ringAt(start: number, random?: () => number) {
  const clock = new AdjustableClock({ frozen: true, start });
  const gauges: OverviewNow = {
    app_connections: 0,
    agent_connections: 0,
    apps_online: 0,
    agents_online: 0,
    events_in_flight: 0,
  };
  let fragments = 0;
  const ring = new OverviewRing({
    clock,
    gauges: { now: () => ({ ...gauges }), fragmentsForwarded: () => fragments },
    ...(random ? { random } : {}),
  });
  const timer = ring.start();
  const start_: EventStart = {
    event_id: 'e',
    app_id: 'a',
    agent_id: 'g',
    thread_id: 't',
    session_key: null,
    payload_bytes: 2,
    received_at: start,
  };
  const replied = (latency: number): EventEnd => ({
    event_id: 'e',
    outcome: 'replied',
    code: null,
    tokens_used: 1,
    completed_at: start,
    latency_ms: latency,
  });
  return { clock, ring, gauges, timer, start: start_, replied, forward: (n: number) => (fragments += n) };
}

describe('the overview ring', function () {
  it('takes a sample at each multiple of overviewSampleMs, never before, counting what happened in its interval', function () {
    const t = ringAt(START + 1_234); // the first interval is short: samples line up on every node
    expect(t.ring.samplesAfter()).to.deep.equal([]);
    t.ring.observer.eventAccepted(t.start);
    t.ring.observer.eventAccepted(t.start);
    t.ring.observer.eventRejected(t.start, 'RATE_LIMIT_EXCEEDED', false);
    t.ring.observer.eventEnded(t.replied(40));
    t.ring.observer.eventEnded({ ...t.replied(0), outcome: 'agent_timeout', code: 'AGENT_TIMEOUT', tokens_used: null });
    t.forward(17);
    Object.assign(t.gauges, { app_connections: 3, agent_connections: 2, events_in_flight: 1 });
    t.clock.advance(SAMPLE - 1_235);
    expect(t.ring.samplesAfter()).to.deep.equal([]);
    t.clock.advance(1);
    const [first] = t.ring.samplesAfter();
    expect(validateOverviewSample(first), JSON.stringify(validateOverviewSample.errors)).to.equal(true);
    expect(first).to.deep.equal({
      at: START + SAMPLE,
      app_connections: 3,
      agent_connections: 2,
      events_in_flight: 1,
      accepted: 2,
      rejected: 1,
      fragments: 17,
      replied: 1,
      errors: { RATE_LIMIT_EXCEEDED: 1, AGENT_TIMEOUT: 1 },
      latency_p50_ms: 40,
      latency_p99_ms: 40,
    });
    t.forward(3);
    t.clock.advance(SAMPLE);
    const second = t.ring.samplesAfter(first!.at);
    expect(second).to.deep.equal([
      {
        at: START + 2 * SAMPLE,
        app_connections: 3,
        agent_connections: 2,
        events_in_flight: 1,
        accepted: 0,
        rejected: 0,
        fragments: 3,
        replied: 0,
        errors: {},
        latency_p50_ms: null,
        latency_p99_ms: null,
      },
    ]);
    expect(t.ring.samplesAfter(second[0]!.at)).to.deep.equal([]);
    t.timer.cancel();
    t.clock.advance(10 * SAMPLE);
    expect(t.ring.samplesAfter()).to.have.length(2);
  });

  it('gives exact p50 and p99 (nearest rank) up to 1024 replies in an interval', function () {
    const t = ringAt(START);
    for (let ms = 200; ms >= 1; ms--) t.ring.observer.eventEnded(t.replied(ms)); // 1..200, out of order
    t.clock.advance(SAMPLE);
    expect(t.ring.samplesAfter()[0]).to.include({ replied: 200, latency_p50_ms: 100, latency_p99_ms: 198 });
    for (let i = 0; i < LATENCIES_PER_SAMPLE; i++) t.ring.observer.eventEnded(t.replied(i < 1000 ? 10 : 5_000));
    t.clock.advance(SAMPLE);
    expect(t.ring.samplesAfter().at(-1)).to.include({ replied: 1024, latency_p50_ms: 10, latency_p99_ms: 5_000 });
  });

  it('samples beyond 1024 latencies uniformly, so a slow tail late in the interval still shows', function () {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646; // a fixed sequence
    const t = ringAt(START, random);
    for (let i = 0; i < 9_000; i++) t.ring.observer.eventEnded(t.replied(10));
    for (let i = 0; i < 1_000; i++) t.ring.observer.eventEnded(t.replied(900)); // the last tenth is slow
    t.clock.advance(SAMPLE);
    const [sample] = t.ring.samplesAfter();
    expect(sample).to.include({ replied: 10_000, latency_p50_ms: 10, latency_p99_ms: 900 });
  });

  it('keeps overviewWindowMs / overviewSampleMs samples, dropping the oldest', function () {
    const t = ringAt(START);
    const capacity = LIMITS.overviewWindowMs / LIMITS.overviewSampleMs;
    t.clock.advance(LIMITS.overviewWindowMs + 5 * SAMPLE);
    const samples = t.ring.samplesAfter();
    expect(samples).to.have.length(capacity);
    expect(samples[0]!.at).to.equal(START + 6 * SAMPLE);
    expect(samples.at(-1)!.at).to.equal(START + capacity * SAMPLE + 5 * SAMPLE);
    expect(samples.every((s, i) => i === 0 || s.at - samples[i - 1]!.at === SAMPLE)).to.equal(true);
  });
});
