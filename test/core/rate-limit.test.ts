// The token buckets (L10, F1, F3): full at start, refilled continuously, and whatever the time they are given does
// — a step back of an hour, forward 400 days and back — never a wait beyond one refill period, nor more than a
// full bucket.
import { expect } from 'chai';
import { RateLimiter, TokenBuckets } from '../../src/core/rate-limit.js';
import { makeBridge } from '../../src/core/bridge.js';
import { Directory } from '../../src/core/directory.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { peerConnector, principalToken, agentRecord } from '../helpers/core-harness.js';
import { validateServiceToAgentMessage, validateServiceToAppMessage } from '../../generated/index.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Takes until one is refused; the events admitted and the wait given. */
function drain(limiter: { take(key: string, now: number): number }, now: number): { admitted: number; wait: number } {
  for (let admitted = 0; ; admitted++) {
    const wait = limiter.take('app', now);
    if (wait > 0) return { admitted, wait };
  }
}

describe('token buckets', function () {
  it('admit a burst, then one event per refill period, the wait never more than one period', function () {
    const limiter = new RateLimiter(2, 3);
    expect(drain(limiter, 0)).to.deep.equal({ admitted: 3, wait: 0.5 });
    expect(limiter.take('app', 250)).to.be.closeTo(0.25, 1e-9);
    expect(limiter.take('app', 500)).to.equal(0);
    expect(new RateLimiter(0, 40).take('app', 0)).to.equal(0); // off
  });

  it('neither lock out nor overgrant when the time they are given steps back an hour, forward 400 days and back', function () {
    const limiter = new RateLimiter(2, 3);
    const t = 10 * DAY;
    expect(drain(limiter, t).admitted).to.equal(3);
    // An hour back: no refill for that take, and a wait of one period at most, not the hour.
    const back = drain(limiter, t - HOUR);
    expect(back.wait).to.be.at.most(0.5);
    expect(limiter.take('app', t - HOUR + 500)).to.equal(0); // and the bucket refills from the new time on
    // 400 days forward: a full bucket at most, never 400 days' worth.
    expect(drain(limiter, t + 400 * DAY).admitted).to.equal(3);
    // Corrected back: the app is not blocked until the clock catches up with 400 days.
    const corrected = drain(limiter, t);
    expect(corrected.wait).to.be.at.most(0.5);
    expect(limiter.take('app', t + 500)).to.equal(0);
  });

  it('can be charged into debt and say how long the debt takes to repay', function () {
    const buckets = new TokenBuckets(1000, 1000);
    expect(buckets.charge('org', 0, 1500)).to.equal(0.5);
    expect(buckets.owing('org', 250)).to.equal(0.25);
    expect(buckets.owing('org', 500)).to.equal(0); // repaid: empty, no longer owing
    expect(buckets.take('org', 501, 2)).to.be.closeTo(0.001, 1e-9);
  });
});

describe('the bridge on a clock that steps (F1)', function () {
  function setup() {
    const directory = new Directory();
    directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
    const app = { app_id: 'app', org_id: 'org', name: 'App', active: true, created_at: 0 };
    const agent = agentRecord('x');
    directory.addApp(app);
    directory.addAgent(agent);
    const clock = new AdjustableClock({ frozen: true, start: 1_700_000_000_000 });
    const ended: { latency_ms: number; completed_at: number }[] = [];
    const observer = {
      eventRejected() {},
      eventAccepted() {},
      eventDelivered() {},
      eventFirstFragment() {},
      eventEnded: (e: (typeof ended)[number]) => ended.push(e),
      sessionOpened() {},
      sessionEvicted() {},
    };
    const bridge = makeBridge({ directory, clock, rateLimiter: new RateLimiter(1, 2), observer });
    const peer = peerConnector();
    const appConn = peer(validateServiceToAppMessage, (s) =>
      bridge.open(s, { kind: 'app', app, token: principalToken('app', 'app') }),
    );
    const agentConn = peer(validateServiceToAgentMessage, (s) =>
      bridge.open(s, { kind: 'agent', agent, token: principalToken('agent', 'x') }),
    );
    const event = () => {
      appConn.handlers.message(JSON.stringify({ type: 'event', agent_id: 'x', thread_id: 't', payload: {} }), false);
      return appConn.frames.at(-1)!;
    };
    const reply = (eventId: string) =>
      agentConn.handlers.message(
        JSON.stringify({ type: 'reply', event_id: eventId, content: 'ok', done: true }),
        false,
      );
    return { clock, appConn, agentConn, event, reply, ended };
  }

  it('gives an app that used its burst a retry_after of one period at most across a step back of an hour and a corrected +400 days', function () {
    const { clock, event, reply } = setup();
    for (const a of [event(), event()]) reply(a.event_id);
    clock.stepWall(-HOUR);
    const limited = event();
    expect(limited).to.include({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(limited.metadata.retry_after_seconds).to.be.at.most(1);
    clock.advance(1000);
    reply(event().event_id);
    clock.stepWall(HOUR + 400 * DAY);
    clock.stepWall(-400 * DAY);
    expect(event().metadata.retry_after_seconds).to.be.at.most(1);
    clock.advance(1000);
    expect(event()).to.include({ type: 'accepted' });
  });

  it('measures latency_ms on the monotonic clock: a +2 h or -1 h step shows in neither it nor a completion before the event', function () {
    const { clock, event, reply, appConn, ended } = setup();
    const forward = event();
    clock.advance(120);
    clock.stepWall(2 * HOUR);
    reply(forward.event_id);
    expect(appConn.frames.at(-1)!.metadata.latency_ms).to.equal(120);
    const back = event();
    const receivedAt = clock.now();
    clock.advance(80);
    clock.stepWall(-HOUR);
    reply(back.event_id);
    expect(appConn.frames.at(-1)!.metadata.latency_ms).to.equal(80);
    expect(ended.map((e) => e.latency_ms)).to.deep.equal([120, 80]);
    expect(ended[1]!.completed_at).to.equal(receivedAt); // the wall clock said an hour before; never before its start
  });

  it('does not close a connection as silent when the wall clock jumps two hours ahead', function () {
    const { clock, appConn } = setup();
    clock.advance(30_000);
    appConn.handlers.message(JSON.stringify({ type: 'ping' }), false);
    clock.stepWall(2 * HOUR);
    clock.advance(60_000); // the idle check at 90 s: 60 s of silence, not two hours
    expect(appConn.closedWith).to.equal(undefined);
  });
});
