// The per-event token prefix must give byte-for-byte the frame a plain JSON.stringify of the message would.
import { expect } from 'chai';
import { validateTokenMessage } from '../../generated/index.js';
import { tokenFrame, tokenPrefix } from '../../src/core/frames.js';

describe('token frames', function () {
  const fragments = ['Hello', '', ' "quoted" ', 'back\\slash', 'line\nbreak\ttab', '\u2028\u2029', 'émoji 😀', '\u0000\u001f', '}{"type":"reply"'];

  for (const fragment of fragments) {
    it(`serialises ${JSON.stringify(fragment)} exactly as JSON.stringify of the whole message`, function () {
      const frame = tokenFrame(tokenPrefix('01J0000000000000000000000A', 'tutor-7k2m'), fragment);
      const expected = { type: 'token', event_id: '01J0000000000000000000000A', agent_id: 'tutor-7k2m', token: fragment };
      expect(frame).to.equal(JSON.stringify(expected));
      expect(validateTokenMessage(JSON.parse(frame))).to.equal(true);
    });
  }
});
