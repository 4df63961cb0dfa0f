// Frames built from parts (a per-event token prefix; a reply from its text and payload already serialised) must be
// byte-for-byte what a plain JSON.stringify of the message would give.
import { expect } from 'chai';
import { validateReplyMessage, validateTokenMessage } from '../../generated/index.js';
import { reply, tokenFrame, tokenPrefix } from '../../src/core/frames.js';

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

describe('reply frames', function () {
  it('splices the serialised text and payload in exactly where JSON.stringify of the whole message puts them', function () {
    const message = {
      type: 'reply',
      event_id: '01J0000000000000000000000A',
      agent_id: 'tutor-7k2m',
      thread_id: 'lesson "1"',
      reply: 'line\nbreak 😀 "quoted"',
      payload: { b: [1, 2.5, 'é'], a: {} },
      metadata: { tokens_used: 3, model: 'm', latency_ms: 12, session_key: 'svc:tutor-7k2m:app:lesson "1"' },
    };
    const { reply: text, payload, metadata, type: _type, ...head } = message;
    const frame = reply(head, JSON.stringify(text), JSON.stringify(payload), metadata);
    expect(frame).to.equal(JSON.stringify(message));
    expect(validateReplyMessage(JSON.parse(frame))).to.equal(true);
  });
});
