// The conformance engine's own rules: pattern matching with captures, and how outcomes become verdicts.
import { expect } from 'chai';
import { mismatch, interpolate } from '../../conformance/match.js';
import { judge, type ScenarioResult } from '../../conformance/results.js';
import type { Requirement } from '../../conformance/scenario.js';
import { expand } from '../../conformance/generate.js';

describe('conformance patterns', function () {
  it('captures an unbound placeholder and compares a bound one', function () {
    const bound = new Map<string, unknown>([['agent', 'tutor']]);
    const captured = new Map<string, unknown>();
    expect(mismatch({ event_id: '${ev}', agent_id: '${agent}' }, { event_id: 'E1', agent_id: 'tutor', extra: 1 }, bound, captured)).to.equal(undefined);
    expect(captured.get('ev')).to.equal('E1');
    expect(mismatch({ agent_id: '${agent}' }, { agent_id: 'other' }, bound, new Map())).to.equal('agent_id: expected "tutor", got "other"');
  });

  it('checks absent fields, ranges, arrays and interpolated strings', function () {
    const b = new Map<string, unknown>([['a', 'x']]);
    expect(mismatch({ event_id: { $absent: true } }, { event_id: 'E' }, b, new Map())).to.match(/event_id: expected no such field/);
    expect(mismatch({ n: { $range: [0, 1] } }, { n: 2 }, b, new Map())).to.match(/expected a number in \[0, 1\]/);
    expect(mismatch([1, 2], [1], b, new Map())).to.match(/expected 2 items, got 1/);
    expect(mismatch('svc:${a}:t', 'svc:x:t', b, new Map())).to.equal(undefined);
    expect(() => interpolate('${missing}', b)).to.throw(/not bound/);
  });

  it('builds payloads and strings of an exact UTF-8 size', function () {
    expect(Buffer.byteLength(JSON.stringify(expand({ $jsonOfBytes: 64000 })), 'utf8')).to.equal(64000);
    expect(Buffer.byteLength(JSON.stringify(expand({ $jsonOfBytes: 64001, char: 'é' })), 'utf8')).to.equal(64001);
    expect(Buffer.byteLength(expand({ $stringOfBytes: 4097, char: 'é' }) as string, 'utf8')).to.equal(4097);
  });
});

describe('conformance verdicts', function () {
  const req = (id: string, level: Requirement['level'] = 'MUST'): [string, Requirement] => [id, { id, level, section: '§', text: id }];
  const requirements = new Map([req('A-001'), req('A-002'), req('A-003', 'SHOULD'), req('A-004'), req('A-005')]);
  const scenario = (id: string, status: ScenarioResult['status'], requirements: string[], failedRequirements?: string[]): ScenarioResult => ({
    id,
    file: `${id}.yaml`,
    title: id,
    requirements,
    status,
    durationMs: 1,
    transcript: [],
    ...(failedRequirements ? { failedRequirements } : {}),
  });

  it('fails only the requirements of the failing step, and calls the unreached ones inconclusive', function () {
    const r = judge(requirements, [scenario('s1', 'failed', ['A-001', 'A-002'], ['A-002']), scenario('s2', 'skipped', ['A-003'])], new Set());
    const verdict = Object.fromEntries(r.requirements.map((q) => [q.id, q.verdict]));
    expect(verdict).to.deep.equal({ 'A-001': 'inconclusive', 'A-002': 'failed', 'A-003': 'skipped', 'A-004': 'untested', 'A-005': 'untested' });
    expect(r.failedByLevel).to.deep.equal({ MUST: 1, SHOULD: 0, MAY: 0 });
    expect(r.counts).to.deep.equal({ passed: 0, failed: 1, skipped: 1 });
  });

  it('reports listed known gaps as expected failures, and flags a listed one that now passes', function () {
    const r = judge(requirements, [scenario('s1', 'failed', ['A-001']), scenario('s2', 'passed', ['A-002'])], new Set(['A-001', 'A-002']));
    const verdict = Object.fromEntries(r.requirements.map((q) => [q.id, q.verdict]));
    expect(verdict['A-001']).to.equal('expected-failure');
    expect(verdict['A-002']).to.equal('unexpectedly-passing');
    expect(r.failedByLevel.MUST).to.equal(0);
  });
});
