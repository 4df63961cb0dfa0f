import { expect } from 'chai';
import { compactJson, iterativeJson } from '../../src/core/compact-json.js';

describe('compact JSON of payloads', function () {
  it('writes exactly what JSON.stringify writes for values that came from JSON', function () {
    const samples = [
      '{}',
      '[]',
      '{"a":1,"b":[true,false,null],"c":{"d":"é😀\\u0000\\"\\\\"}}',
      '{"__proto__":{"x":1},"constructor":2}',
      '[1.5,-0,1e21,123456789012345678901234567890,"\\ud800"]',
      '{"": "", " ": [[], {}]}',
      '"text"',
      '42',
      'null',
    ];
    for (const text of samples) {
      const value = JSON.parse(text);
      expect(iterativeJson(value), text).to.equal(JSON.stringify(value));
    }
  });

  it('serialises nesting deeper than JSON.stringify can', function () {
    const depth = 100_000;
    const text = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    const value = JSON.parse(text);
    expect(() => JSON.stringify(value)).to.throw(RangeError);
    expect(compactJson(value)).to.equal(text);
  });
});
