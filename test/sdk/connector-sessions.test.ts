// §2.5, H4, T4: a runtime session per `svc:{app_id}:{thread_id}`, created with a copy of the agent's context,
// reused before the TTL and recreated after it; time from the frozen clock.
import { expect } from 'chai';
import { AdjustableClock } from '../../src/shared/clock.js';
import { SessionStore } from '../../src/sdk/connector/sessions.js';

const DAY = 86_400_000;
const START = Date.parse('2026-11-22T12:00:00.000Z');

describe('connector sessions', function () {
  it('reuses a session until createdAt + ttl_days and creates a fresh one from then on', function () {
    const clock = new AdjustableClock({ frozen: true, start: START });
    const store = new SessionStore({ ttlDays: 14, context: { persona: 'tutor' }, clock });

    const first = store.acquire('svc:app-1:lesson-42');
    expect(first.created).to.equal(true);
    expect(first.session).to.deep.include({ key: 'svc:app-1:lesson-42', context: { persona: 'tutor' }, data: {} });
    expect(first.session.createdAt.toISOString()).to.equal('2026-11-22T12:00:00.000Z');
    expect(first.session.expiresAt.toISOString()).to.equal('2026-12-06T12:00:00.000Z');
    first.session.data.history = ['hi'];

    clock.advance(14 * DAY - 1);
    const again = store.acquire('svc:app-1:lesson-42');
    expect(again.created).to.equal(false);
    expect(again.session).to.equal(first.session);
    expect(again.session.data).to.deep.equal({ history: ['hi'] });

    clock.advance(1);
    expect(store.get('svc:app-1:lesson-42')).to.equal(undefined);
    const renewed = store.acquire('svc:app-1:lesson-42');
    expect(renewed.created).to.equal(true);
    expect(renewed.session).to.not.equal(first.session);
    expect(renewed.session.data).to.deep.equal({});
    expect(renewed.session.createdAt.getTime()).to.equal(START + 14 * DAY);
  });

  it('keeps threads apart and gives each session its own deep copy of the context', function () {
    const clock = new AdjustableClock({ frozen: true, start: START });
    const context = { persona: 'tutor', levels: { maths: 3 } };
    const store = new SessionStore({ ttlDays: 30, context, clock });
    const a = store.acquire('svc:app-1:t1').session;
    const b = store.acquire('svc:app-1:t2').session;
    expect(a).to.not.equal(b);
    (a.context.levels as { maths: number }).maths = 9;
    expect(context.levels.maths).to.equal(3);
    expect((b.context.levels as { maths: number }).maths).to.equal(3);
    expect(a.expiresAt.getTime() - a.createdAt.getTime()).to.equal(30 * DAY);
  });

  it('sweeps expired sessions (also by itself on a lookup an hour later)', function () {
    const clock = new AdjustableClock({ frozen: true, start: START });
    const store = new SessionStore({ ttlDays: 1, clock });
    store.acquire('svc:a:1');
    clock.advance(DAY / 2);
    store.acquire('svc:a:2');
    clock.advance(DAY / 2);
    expect(store.size).to.equal(2);
    store.acquire('svc:a:2'); // a lookup more than an hour after the last sweep sweeps the expired one
    expect(store.size).to.equal(1);
    clock.advance(DAY);
    expect(store.sweep()).to.equal(1);
    expect(store.size).to.equal(0);
  });
});
