// The conformance engine's own rules: pattern matching with captures and the values scenarios generate. How
// outcomes become verdicts is results.test.ts.
import { expect } from 'chai';
import { mismatch, interpolate, type MatchOptions } from '../../conformance/match.js';
import { expand } from '../../conformance/generate.js';

describe('conformance patterns', function () {
  it('captures an unbound placeholder and compares a bound one', function () {
    const bound = new Map<string, unknown>([['agent', 'tutor']]);
    const captured = new Map<string, unknown>();
    expect(
      mismatch(
        { event_id: '${ev}', agent_id: '${agent}' },
        { event_id: 'E1', agent_id: 'tutor', extra: 1 },
        bound,
        captured,
      ),
    ).to.equal(undefined);
    expect(captured.get('ev')).to.equal('E1');
    expect(mismatch({ agent_id: '${agent}' }, { agent_id: 'other' }, bound, new Map())).to.equal(
      'agent_id: expected "tutor", got "other"',
    );
  });

  it('checks absent fields, ranges, arrays and interpolated strings', function () {
    const b = new Map<string, unknown>([['a', 'x']]);
    expect(mismatch({ event_id: { $absent: true } }, { event_id: 'E' }, b, new Map())).to.match(
      /event_id: expected no such field/,
    );
    expect(mismatch({ n: { $range: [0, 1] } }, { n: 2 }, b, new Map())).to.match(/expected a number in \[0, 1\]/);
    expect(mismatch([1, 2], [1], b, new Map())).to.match(/expected 2 items, got 1/);
    expect(mismatch('svc:${a}:t', 'svc:x:t', b, new Map())).to.equal(undefined);
    expect(() => interpolate('${missing}', b)).to.throw(/not bound/);
  });

  it('matches lists in any order, and checks an order alone', function () {
    const none = new Map<string, unknown>();
    const list = [
      { id: 'b', n: 2 },
      { id: 'a', n: 1 },
    ];
    expect(mismatch({ $unordered: [{ id: 'a' }, { id: 'b' }] }, list, none, new Map())).to.equal(undefined);
    expect(mismatch({ $unordered: [{ id: 'a' }, { id: 'c' }] }, list, none, new Map())).to.match(
      /do not match .* in any order/,
    );
    expect(mismatch({ $unordered: [{ id: 'a' }] }, list, none, new Map())).to.match(
      /expected 1 items in any order, got 2/,
    );
    expect(mismatch({ $sortedBy: 'id' }, list, none, new Map())).to.match(/expected sorted by id, got \["b","a"\]/);
    expect(mismatch({ $sortedBy: 'id' }, [...list].reverse(), none, new Map())).to.equal(undefined);
  });

  it('judges a $ours part only when asked, and says whose it is', function () {
    const none = new Map<string, unknown>();
    const pattern = {
      type: 'error',
      code: { $ours: 'ERR-009', is: 'INVALID_MESSAGE' },
      event_id: { $ours: 'AUTH-008', is: { $absent: true } },
    };
    const frame = { type: 'error', code: 'INVALID_JSON', event_id: 'E1' };
    expect(mismatch(pattern, frame, none, new Map()), 'not judged').to.equal(undefined);
    const failedOurs: MatchOptions['failedOurs'] = {};
    expect(mismatch(pattern, frame, none, new Map(), '', { judgesOurs: () => true, failedOurs })).to.match(
      /code: expected "INVALID_MESSAGE"/,
    );
    expect(failedOurs.requirement).to.equal('ERR-009');
    const onlyAuth: MatchOptions['failedOurs'] = {};
    expect(
      mismatch(pattern, frame, none, new Map(), '', { judgesOurs: (id) => id === 'AUTH-008', failedOurs: onlyAuth }),
    ).to.match(/event_id: expected no such field/);
    expect(onlyAuth.requirement).to.equal('AUTH-008');
  });

  it('bounds a number by the time the suite measured since a mark', function () {
    const marks = new Map([['sent', performance.now() - 50]]);
    expect(
      mismatch({ latency_ms: { $atMostMsSince: 'sent' } }, { latency_ms: 10 }, new Map(), new Map(), '', { marks }),
    ).to.equal(undefined);
    expect(
      mismatch({ latency_ms: { $atMostMsSince: 'sent' } }, { latency_ms: 5000 }, new Map(), new Map(), '', { marks }),
    ).to.match(/expected a number from 0 to \d+ \(the milliseconds the suite measured\), got 5000/);
  });

  it('builds payloads and strings of an exact UTF-8 size, and numbers from settings', function () {
    expect(Buffer.byteLength(JSON.stringify(expand({ $jsonOfBytes: 64000 })), 'utf8')).to.equal(64000);
    expect(Buffer.byteLength(JSON.stringify(expand({ $jsonOfBytes: 64001, char: 'é' })), 'utf8')).to.equal(64001);
    expect(Buffer.byteLength(expand({ $stringOfBytes: 4097, char: 'é' }) as string, 'utf8')).to.equal(4097);
    expect(expand({ ms: { $sum: [300000, -1] } })).to.deep.equal({ ms: 299999 });
    expect(
      (expand({ $stringOfBytes: { $minus: [250, { $length: 'agent-1' }, { $length: 'app' }] } }) as string).length,
    ).to.equal(240);
  });
});
