// Frames built from parts (a per-event token prefix; a reply from its text and payload already serialised) must be
// byte-for-byte what a plain JSON.stringify of the message would give.
import { expect } from 'chai';
import { LIMITS, validateAgentsMessage, validateReplyMessage, validateTokenMessage } from '../../generated/index.js';
import { agents, reply, tokenFrame, tokenPrefix } from '../../src/core/frames.js';

describe('token frames', function () {
  const fragments = [
    'Hello',
    '',
    ' "quoted" ',
    'back\\slash',
    'line\nbreak\ttab',
    '\u2028\u2029',
    'émoji 😀',
    '\u0000\u001f',
    '}{"type":"reply"',
  ];

  for (const fragment of fragments) {
    it(`serialises ${JSON.stringify(fragment)} exactly as JSON.stringify of the whole message`, function () {
      const frame = tokenFrame(tokenPrefix('01J0000000000000000000000A', 'tutor-7k2m'), fragment);
      const expected = {
        type: 'token',
        event_id: '01J0000000000000000000000A',
        agent_id: 'tutor-7k2m',
        token: fragment,
      };
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

describe('the agents frame (W13)', function () {
  /** `count` agents whose frame, whole, is exactly `bytes` long: the last description pads it. */
  function agentsOfFrame(count: number, bytes: number) {
    const list = Array.from({ length: count }, (_, i) => ({
      agent_id: `agent-${String(i).padStart(4, '0')}`,
      name: `Agent ${i}`,
      description: 'é'.repeat(500),
    }));
    const short = Buffer.byteLength(JSON.stringify({ type: 'agents', agents: list }));
    list[count - 1]!.description += 'x'.repeat(bytes - short);
    return list;
  }

  it('is JSON.stringify of the whole message when it fits, to the last byte, with no incomplete', function () {
    const list = agentsOfFrame(900, LIMITS.frameMaxBytes);
    const frame = agents(list);
    expect(frame).to.equal(JSON.stringify({ type: 'agents', agents: list }));
    expect(Buffer.byteLength(frame)).to.equal(LIMITS.frameMaxBytes);
  });

  it('one byte over, lists the first agents that fit with incomplete: true, still within frameMaxBytes', function () {
    const list = agentsOfFrame(900, LIMITS.frameMaxBytes + 1);
    const frame = agents(list);
    const message = JSON.parse(frame);
    expect(validateAgentsMessage(message)).to.equal(true);
    expect(message.incomplete).to.equal(true);
    expect(message.agents).to.deep.equal(list.slice(0, message.agents.length));
    expect(message.agents.length).to.equal(899);
    expect(Buffer.byteLength(frame)).to.be.at.most(LIMITS.frameMaxBytes);
    expect(frame).to.equal(JSON.stringify({ type: 'agents', agents: message.agents, incomplete: true }));
  });

  it('serialises only the agents it lists and one more, however many are given', function () {
    let made = 0;
    function* many() {
      for (;;) yield { agent_id: `agent-${made++}`, name: 'n', description: 'd'.repeat(1_000) };
    }
    const message = JSON.parse(agents(many()));
    expect(message.incomplete).to.equal(true);
    expect(made).to.equal(message.agents.length + 1);
  });
});
