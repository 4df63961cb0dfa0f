// Frame validation on both endpoints (W4, W6, W7, W11, L2-L4 and the x-error-catalogue): every app `event` gets
// exactly one `accepted` or one `error`, in order; refused frames never close a connection; agent-side errors go
// to the agent only and the event goes on; hostile frames leave the process and its connections working.
import { expect } from 'chai';
import { LIMITS, type ErrorCode, type ErrorMessage, type ErrorToAgentMessage } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';

/** A well-formed event id that the bridge never issued (ULIDs are 26 Crockford base32 characters). */
const UNKNOWN_EVENT_ID = '01JQ7ZK3M4N5P6Q7R8S9T0V1W9';
/** A well-formed agent id that no organization has. */
const GHOST_AGENT = 'ghost-agent-0000';
/** Field names that a plain object lookup finds on Object.prototype. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
const codePoints = (text: string) => [...text].length;

/** A payload `{ d: … }` whose compact JSON is exactly `bytes` UTF-8 bytes, mostly made of `unit`. */
function payloadOfBytes(bytes: number, unit = 'x'): { d: string } {
  const room = bytes - utf8(JSON.stringify({ d: '' }));
  const count = Math.floor(room / utf8(unit));
  const payload = { d: unit.repeat(count) + 'x'.repeat(room - count * utf8(unit)) };
  expect(utf8(JSON.stringify(payload))).to.equal(bytes);
  return payload;
}

/** The next app frame, which must be an `error` with this code. */
async function appError(client: AppClient, code: ErrorCode): Promise<ErrorMessage> {
  const message = await client.expect('error');
  expect(message.code, message.error).to.equal(code);
  return message;
}

/** The next agent frame, which must be an `error` with this code. */
async function agentError(client: AgentClient, code: ErrorCode): Promise<ErrorToAgentMessage> {
  const message = await client.expect('error');
  expect(message.code, message.error).to.equal(code);
  return message;
}

/** Tracks the event ids the bridge hands out in one test: each answer to an `event` must carry a fresh one. */
function freshIds() {
  const seen = new Set<string>();
  return (id: string | undefined): string => {
    expect(id, 'an answer to an event frame carries an event_id').to.be.a('string');
    expect(seen.has(id!), `event_id ${id} was already used`).to.equal(false);
    seen.add(id!);
    return id!;
  };
}

describe('frame validation', function () {
  describe('app side', function () {
    it('answers INVALID_JSON without event_id to text that is not JSON, to JSON that is not an object, and to binary frames', async function () {
      const bridge = await startTestBridge();
      const { appClient } = await bridge.pair();
      for (const text of [
        'not json',
        '{"type":"event",',
        "{'type':'ping'}",
        '[{"type":"ping"}]',
        '[]',
        '42',
        '"ping"',
        'null',
        'true',
      ]) {
        appClient.send(text);
        const error = await appError(appClient, 'INVALID_JSON');
        expect(error, text).to.not.have.any.keys('event_id', 'agent_id', 'metadata');
      }
      appClient.sendBinary(Buffer.from(JSON.stringify({ type: 'ping' })));
      expect(await appError(appClient, 'INVALID_JSON')).to.not.have.any.keys('event_id', 'agent_id');
      appClient.sendBinary(Buffer.from([0xff, 0x00, 0xfe]));
      expect(await appError(appClient, 'INVALID_JSON')).to.not.have.any.keys('event_id', 'agent_id');
      await appClient.expectNothingBeforePong();
      expect(appClient.isClosed).to.equal(false);
    });

    it('answers INVALID_MESSAGE naming the offending field, with a fresh event_id only when the frame is an event', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient } = await bridge.pair();
      const fresh = freshIds();
      const agentId = agent.agent_id;

      // Not an event: no event_id, no agent_id.
      const notEvents: [unknown, RegExp][] = [
        [{ type: 'subscribe' }, /\btype\b/],
        [{ type: 'Event', agent_id: agentId, thread_id: 't', payload: {} }, /\btype\b/],
        [{ agent_id: agentId, thread_id: 't', payload: {} }, /\btype\b/],
        [{ type: 42 }, /\btype\b/],
        [{ type: 'discover', x: 1 }, /\bx\b/],
        [{ type: 'ping', extra: true }, /\bextra\b/],
      ];
      for (const [frame, field] of notEvents) {
        appClient.send(frame);
        const error = await appError(appClient, 'INVALID_MESSAGE');
        expect(error, JSON.stringify(frame)).to.not.have.any.keys('event_id', 'agent_id');
        expect(error.error).to.match(field);
      }

      // Events: a fresh event_id and the well-formed agent_id.
      const events: [unknown, RegExp][] = [
        [{ type: 'event', agent_id: agentId, thread_id: 't', payload: {}, priority: 'high' }, /\bpriority\b/],
        [{ type: 'event', agent_id: agentId, thread_id: 't', payload: [1, 2] }, /\bpayload\b/],
        [{ type: 'event', agent_id: agentId, thread_id: 't', payload: 'text' }, /\bpayload\b/],
        [{ type: 'event', agent_id: agentId, thread_id: 't', payload: null }, /\bpayload\b/],
        [{ type: 'event', agent_id: agentId, thread_id: 't', payload: 7 }, /\bpayload\b/],
        [{ type: 'event', agent_id: agentId, thread_id: 't' }, /\bpayload\b/],
      ];
      for (const [frame, field] of events) {
        appClient.send(frame);
        const error = await appError(appClient, 'INVALID_MESSAGE');
        fresh(error.event_id);
        expect(error.agent_id, JSON.stringify(frame)).to.equal(agentId);
        expect(error.error).to.match(field);
      }
      await appClient.expectNothingBeforePong();
    });

    it('answers INVALID_MESSAGE for unknown fields named like Object.prototype members (__proto__, constructor, toString…)', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient } = await bridge.pair();
      const fresh = freshIds();
      for (const field of PROTOTYPE_NAMES) {
        for (const type of ['ping', 'discover']) {
          appClient.send(`{"type":"${type}","${field}":{"polluted":1}}`);
          const error = await appError(appClient, 'INVALID_MESSAGE');
          expect(error, `${type} with ${field}`).to.not.have.any.keys('event_id', 'agent_id');
          expect(error.error).to.include(field);
        }
        appClient.send(
          `{"type":"event","agent_id":"${agent.agent_id}","thread_id":"t","payload":{},"${field}":{"polluted":1}}`,
        );
        const error = await appError(appClient, 'INVALID_MESSAGE');
        fresh(error.event_id);
        expect(error.agent_id, `event with ${field}`).to.equal(agent.agent_id);
        expect(error.error).to.include(field);
      }
      await appClient.expectNothingBeforePong();
      expect(({} as any).polluted).to.equal(undefined);
    });

    it('answers INVALID_AGENT_ID with a fresh event_id and no agent_id for a malformed, missing or mistyped agent_id', async function () {
      const bridge = await startTestBridge();
      const { appClient } = await bridge.pair();
      const fresh = freshIds();
      const bad: unknown[] = [
        'Tutor-7k2m',
        'tutor_7k2m',
        'tutor:7k2m',
        'a'.repeat(LIMITS.idMaxChars + 1),
        '',
        ' tutor',
        42,
        null,
        ['tutor'],
        { id: 'tutor' },
      ];
      for (const agent_id of bad) {
        appClient.send({ type: 'event', agent_id, thread_id: 't', payload: {} });
        const error = await appError(appClient, 'INVALID_AGENT_ID');
        fresh(error.event_id);
        expect(error, JSON.stringify(agent_id)).to.not.have.property('agent_id');
        expect(error.error).to.match(/\bagent_id\b/);
      }
      appClient.send({ type: 'event', thread_id: 't', payload: {} });
      const missing = await appError(appClient, 'INVALID_AGENT_ID');
      fresh(missing.event_id);
      expect(missing).to.not.have.property('agent_id');
      expect(missing.error).to.match(/\bagent_id\b/);

      // The longest well-formed id passes the shape check: it is simply unknown.
      const longest = 'a'.repeat(LIMITS.idMaxChars);
      appClient.send({ type: 'event', agent_id: longest, thread_id: 't', payload: {} });
      const notFound = await appError(appClient, 'AGENT_NOT_FOUND');
      expect(notFound.agent_id).to.equal(longest);
      fresh(notFound.event_id);
      await appClient.expectNothingBeforePong();
    });

    it('answers INVALID_THREAD_ID for an empty, too long, control-character, unpaired-surrogate, missing or mistyped thread_id', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const fresh = freshIds();
      const bad: unknown[] = [
        '',
        'x'.repeat(LIMITS.threadIdMaxChars + 1),
        '😀'.repeat(LIMITS.threadIdMaxChars + 1),
        'lesson\u0000',
        'line\nbreak',
        'tab\tbed',
        'del\u007f',
        'c1\u0085',
        'c1\u009f',
        'lone\ud800',
        '\udc00lone',
        42,
        null,
        ['t'],
      ];
      for (const thread_id of bad) {
        appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id, payload: {} });
        const error = await appError(appClient, 'INVALID_THREAD_ID');
        fresh(error.event_id);
        expect(error.agent_id, JSON.stringify(thread_id)).to.equal(agent.agent_id);
        expect(error.error).to.match(/\bthread_id\b/);
      }
      appClient.send({ type: 'event', agent_id: agent.agent_id, payload: {} });
      const missing = await appError(appClient, 'INVALID_THREAD_ID');
      fresh(missing.event_id);
      expect(missing.agent_id).to.equal(agent.agent_id);
      await appClient.expectNothingBeforePong();
      await agentClient.expectNothingBeforePong();
    });

    it('accepts a thread_id of exactly threadIdMaxChars code points (emoji count once) and its session key fits sessionKeyMaxChars', async function () {
      const bridge = await startTestBridge();
      const { app, agent, appClient, agentClient } = await bridge.pair();
      const threadId = '😀'.repeat(LIMITS.threadIdMaxChars - 2) + ':é';
      expect(codePoints(threadId)).to.equal(LIMITS.threadIdMaxChars);
      expect(threadId.length, 'UTF-16 units exceed the limit; code points do not').to.be.greaterThan(
        LIMITS.threadIdMaxChars,
      );

      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: threadId, payload: {} });
      const accepted = await appClient.expect('accepted');
      expect(accepted.session_key).to.equal(`svc:${agent.agent_id}:${app.app_id}:${threadId}`);
      expect(codePoints(accepted.session_key)).to.be.at.most(LIMITS.sessionKeyMaxChars);
      const delivered = await agentClient.expect('event');
      expect(delivered.thread_id).to.equal(threadId);
      expect(delivered.session_key).to.equal(`svc:${app.app_id}:${threadId}`);

      // The worst case the limit was computed for: both ids at idMaxChars.
      const worst = `svc:${'a'.repeat(LIMITS.idMaxChars)}:${'b'.repeat(LIMITS.idMaxChars)}:${threadId}`;
      expect(codePoints(worst)).to.equal(LIMITS.sessionKeyMaxChars);
    });

    it('accepts a payload of exactly payloadMaxBytes UTF-8 bytes of compact JSON and answers PAYLOAD_TOO_LARGE one byte over, without closing', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const fresh = freshIds();
      const send = (payload: object) =>
        appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload });

      for (const unit of ['x', 'é', '€', '😀']) {
        const atLimit = payloadOfBytes(LIMITS.payloadMaxBytes, unit);
        send(atLimit);
        fresh((await appClient.expect('accepted')).event_id);
        expect((await agentClient.expect('event')).payload, `${unit} at the limit arrives untouched`).to.deep.equal(
          atLimit,
        );

        const over = payloadOfBytes(LIMITS.payloadMaxBytes + 1, unit);
        if (unit !== 'x')
          expect(JSON.stringify(over).length, 'fewer characters than bytes').to.be.below(LIMITS.payloadMaxBytes);
        send(over);
        const error = await appError(appClient, 'PAYLOAD_TOO_LARGE');
        fresh(error.event_id);
        expect(error.agent_id).to.equal(agent.agent_id);
        expect(error.error).to.include(String(LIMITS.payloadMaxBytes));
      }

      // JSON escapes count as they are serialised: a newline is two bytes (`\n`), a quote two (`\"`).
      const escaped = { d: '\n'.repeat((LIMITS.payloadMaxBytes - utf8('{"d":""}')) / 2) };
      expect(utf8(JSON.stringify(escaped))).to.equal(LIMITS.payloadMaxBytes);
      send(escaped);
      fresh((await appClient.expect('accepted')).event_id);
      await agentClient.expect('event');
      send({ ...escaped, e: '"' });
      fresh((await appError(appClient, 'PAYLOAD_TOO_LARGE')).event_id);

      // Far over the payload limit, still under the frame limit: an error, never a 1009 close.
      send({ d: 'x'.repeat(LIMITS.frameMaxBytes - 1000) });
      const huge = await appError(appClient, 'PAYLOAD_TOO_LARGE');
      fresh(huge.event_id);
      expect(huge.agent_id).to.equal(agent.agent_id);
      await appClient.expectNothingBeforePong();
      expect(appClient.isClosed).to.equal(false);
      await agentClient.expectNothingBeforePong();
    });

    it('accepts an opaque payload nested 10000 levels deep (under payloadMaxBytes) and delivers it whole', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const levels = 10_000;
      const payloadText = '{"a":'.repeat(levels) + '[]' + '}'.repeat(levels);
      expect(utf8(payloadText)).to.be.at.most(LIMITS.payloadMaxBytes);
      appClient.send(`{"type":"event","agent_id":"${agent.agent_id}","thread_id":"deep","payload":${payloadText}}`);
      const accepted = await appClient.expect('accepted');
      const delivered = await agentClient.expect('event');
      expect(delivered.event_id).to.equal(accepted.event_id);
      let depth = 0;
      for (let node: any = delivered.payload; node && !Array.isArray(node); node = node.a) depth++;
      expect(depth).to.equal(levels);
      await appClient.expectNothingBeforePong();
    });

    it('answers AGENT_NOT_FOUND alike for an unknown agent and for an agent of another organization', async function () {
      const bridge = await startTestBridge();
      const { appClient } = await bridge.pair();
      const otherOrg = await bridge.org('Other Org');
      const foreign = await bridge.agent(otherOrg.org_id, 'Foreign Agent');
      const foreignClient = await bridge.connectAgent(foreign.token);
      const fresh = freshIds();

      appClient.send({ type: 'event', agent_id: GHOST_AGENT, thread_id: 't', payload: {} });
      const unknown = await appError(appClient, 'AGENT_NOT_FOUND');
      fresh(unknown.event_id);
      expect(unknown.agent_id).to.equal(GHOST_AGENT);

      appClient.send({ type: 'event', agent_id: foreign.agent_id, thread_id: 't', payload: {} });
      const other = await appError(appClient, 'AGENT_NOT_FOUND');
      fresh(other.event_id);
      expect(other.agent_id).to.equal(foreign.agent_id);

      expect(other.error.split(foreign.agent_id).join('<id>')).to.equal(unknown.error.split(GHOST_AGENT).join('<id>'));
      expect(Object.keys(other).sort()).to.deep.equal(Object.keys(unknown).sort());
      await appClient.expectNothingBeforePong();
      await foreignClient.expectNothingBeforePong();
    });

    it("answers PERMISSION_DENIED when the app is not on the agent's allowlist, accepts again after null, and denies everyone with []", async function () {
      const bridge = await startTestBridge();
      const { org, agent, appClient, agentClient } = await bridge.pair();
      const otherApp = await bridge.app(org.org_id, 'Other App');
      const otherClient = await bridge.connectApp(otherApp.token);
      const fresh = freshIds();
      const allow = async (app_ids: string[] | null) => {
        const res = await bridge.http('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, {
          body: { app_ids },
          schema: 'Agent',
        });
        expect(res.status).to.equal(200);
      };
      const send = (client: AppClient) =>
        client.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const denied = async (client: AppClient) => {
        send(client);
        const error = await appError(client, 'PERMISSION_DENIED');
        fresh(error.event_id);
        expect(error.agent_id).to.equal(agent.agent_id);
      };
      const accepted = async (client: AppClient) => {
        send(client);
        const { event_id } = await client.expect('accepted');
        fresh(event_id);
        expect((await agentClient.expect('event')).event_id).to.equal(event_id);
      };

      await allow([otherApp.app_id]);
      await denied(appClient);
      await accepted(otherClient);

      await allow(null);
      await accepted(appClient);
      await accepted(otherClient);

      await allow([]);
      await denied(appClient);
      await denied(otherClient);

      await agentClient.expectNothingBeforePong();
      await appClient.expectNothingBeforePong();
      await otherClient.expectNothingBeforePong();
    });

    it('answers AGENT_OFFLINE for a registered agent that is not connected, and accepts once it connects', async function () {
      const bridge = await startTestBridge();
      const org = await bridge.org();
      const app = await bridge.app(org.org_id);
      const agent = await bridge.agent(org.org_id);
      const appClient = await bridge.connectApp(app.token);

      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const error = await appError(appClient, 'AGENT_OFFLINE');
      expect(error.event_id).to.be.a('string');
      expect(error.agent_id).to.equal(agent.agent_id);

      const agentClient = await bridge.connectAgent(agent.token);
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const accepted = await appClient.expect('accepted');
      expect(accepted.event_id).to.not.equal(error.event_id);
      expect((await agentClient.expect('event')).event_id).to.equal(accepted.event_id);
    });

    it('runs the checks in the order of W7: shape, size, existence, permission, presence', async function () {
      const bridge = await startTestBridge();
      const { org, agent, appClient } = await bridge.pair();
      const offline = await bridge.agent(org.org_id, 'Offline Agent');
      const otherApp = await bridge.app(org.org_id, 'Other App');
      await bridge.http('PUT', `/admin/v1/agents/${offline.agent_id}/allowlist`, {
        body: { app_ids: [otherApp.app_id] },
        schema: 'Agent',
      });
      const big = payloadOfBytes(LIMITS.payloadMaxBytes + 1);
      const cases: [object, ErrorCode][] = [
        [{ agent_id: 'BAD', thread_id: '', payload: big }, 'INVALID_AGENT_ID'],
        [{ agent_id: agent.agent_id, thread_id: '', payload: big }, 'INVALID_THREAD_ID'],
        [{ agent_id: GHOST_AGENT, thread_id: 't', payload: big }, 'PAYLOAD_TOO_LARGE'],
        [{ agent_id: offline.agent_id, thread_id: 't', payload: big }, 'PAYLOAD_TOO_LARGE'],
        [{ agent_id: offline.agent_id, thread_id: 't', payload: {} }, 'PERMISSION_DENIED'],
      ];
      for (const [fields, code] of cases) {
        appClient.send({ type: 'event', ...fields });
        await appError(appClient, code);
      }
      await appClient.expectNothingBeforePong();
    });

    it('answers a burst of mixed frames one for one, in the order sent, with distinct event ids', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const event = (fields: object) => ({
        type: 'event',
        agent_id: agent.agent_id,
        thread_id: 't',
        payload: {},
        ...fields,
      });
      const burst: [unknown, string][] = [
        [event({ payload: { n: 1 } }), 'accepted'],
        [event({ agent_id: 'Not_An_Id' }), 'INVALID_AGENT_ID'],
        [event({ payload: { n: 2 } }), 'accepted'],
        [event({ thread_id: 'bad\u0001thread' }), 'INVALID_THREAD_ID'],
        [{ type: 'ping' }, 'pong'],
        [event({ payload: payloadOfBytes(LIMITS.payloadMaxBytes + 1) }), 'PAYLOAD_TOO_LARGE'],
        [event({ agent_id: GHOST_AGENT }), 'AGENT_NOT_FOUND'],
        [event({ payload: { n: 3 } }), 'accepted'],
      ];
      for (const [frame] of burst) appClient.send(frame);

      const answers = [];
      for (let i = 0; i < burst.length; i++) answers.push(await appClient.waitForMessage());
      expect(answers.map((a) => (a.type === 'error' ? a.code : a.type))).to.deep.equal(
        burst.map(([, expected]) => expected),
      );
      const ids = answers.flatMap((a) => ('event_id' in a && a.event_id ? [a.event_id] : []));
      expect(ids).to.have.length(burst.length - 1);
      expect(new Set(ids).size).to.equal(ids.length);

      const acceptedIds = answers.flatMap((a) => (a.type === 'accepted' ? [a.event_id] : []));
      for (const [i, id] of acceptedIds.entries()) {
        const delivered = await agentClient.expect('event');
        expect(delivered.event_id).to.equal(id);
        expect(delivered.payload).to.deep.equal({ n: i + 1 });
      }
      await appClient.expectNothingBeforePong();
      await agentClient.expectNothingBeforePong();
    });
  });

  describe('agent side', function () {
    it('answers INVALID_JSON to the agent for non-JSON text and binary frames, and the event goes on', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id: eventId } = await startEvent(appClient, agentClient, agent.agent_id);

      for (const text of ['not json', `{"type":"reply","event_id":"${eventId}",`, '[]', 'null', '"token"']) {
        agentClient.send(text);
        expect(await agentError(agentClient, 'INVALID_JSON'), text).to.not.have.property('event_id');
      }
      agentClient.sendBinary(
        Buffer.from(JSON.stringify({ type: 'reply', event_id: eventId, content: 'binary', done: true })),
      );
      expect(await agentError(agentClient, 'INVALID_JSON')).to.not.have.property('event_id');
      await agentClient.expectNothingBeforePong();
      await appClient.expectNothingBeforePong();

      agentClient.send({ type: 'reply', event_id: eventId, content: 'done', done: true });
      const reply = await appClient.expect('reply');
      expect(reply).to.include({ event_id: eventId, reply: 'done' });
      expect(agentClient.isClosed).to.equal(false);
    });

    it('answers INVALID_MESSAGE for a reply without done or with done:false, a mistyped field and an unknown type, with the event_id when well-formed', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id: eventId } = await startEvent(appClient, agentClient, agent.agent_id);

      const withId: [unknown, RegExp][] = [
        [{ type: 'reply', event_id: eventId, content: 'early' }, /\bdone\b/],
        [{ type: 'reply', event_id: eventId, content: 'early', done: false }, /\bdone\b/],
        [{ type: 'reply', event_id: eventId, content: 'early', done: 'true' }, /\bdone\b/],
        [{ type: 'reply', event_id: eventId, done: true }, /\bcontent\b/],
        [{ type: 'token', event_id: eventId, token: 5 }, /\btoken\b/],
        [{ type: 'token', event_id: eventId, token: 'x', seq: 1 }, /\bseq\b/],
        [{ type: 'error', event_id: eventId, error: 'failed' }, /\bcode\b/],
        [{ type: 'progress', event_id: eventId, percent: 50 }, /\btype\b/],
        [{ type: 'event', event_id: eventId }, /\btype\b/],
        [{ event_id: eventId, token: 'x' }, /\btype\b/],
      ];
      for (const [frame, field] of withId) {
        agentClient.send(frame);
        const error = await agentError(agentClient, 'INVALID_MESSAGE');
        expect(error.event_id, JSON.stringify(frame)).to.equal(eventId);
        expect(error.error).to.match(field);
      }
      for (const frame of [{ type: 'progress' }, { token: 'x' }, { type: 'progress', event_id: 'not an id!' }]) {
        agentClient.send(frame);
        expect(await agentError(agentClient, 'INVALID_MESSAGE'), JSON.stringify(frame)).to.not.have.property(
          'event_id',
        );
      }
      await agentClient.expectNothingBeforePong();
      await appClient.expectNothingBeforePong();

      agentClient.send({ type: 'reply', event_id: eventId, content: 'final', done: true });
      expect(await appClient.expect('reply')).to.include({ event_id: eventId, reply: 'final' });
    });

    it('answers INVALID_MESSAGE for unknown fields named like Object.prototype members, with the event_id, and the event goes on', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id: eventId } = await startEvent(appClient, agentClient, agent.agent_id);
      for (const field of PROTOTYPE_NAMES) {
        for (const frame of [
          `{"type":"token","event_id":"${eventId}","token":"x","${field}":{"polluted":1}}`,
          `{"type":"reply","event_id":"${eventId}","content":"x","done":true,"${field}":{"polluted":1}}`,
          `{"type":"ping","${field}":{"polluted":1}}`,
        ]) {
          agentClient.send(frame);
          const error = await agentError(agentClient, 'INVALID_MESSAGE');
          if (frame.includes('event_id')) expect(error.event_id, frame).to.equal(eventId);
          expect(error.error).to.include(field);
        }
      }
      await agentClient.expectNothingBeforePong();
      await appClient.expectNothingBeforePong();
      agentClient.send({ type: 'reply', event_id: eventId, content: 'final', done: true });
      expect(await appClient.expect('reply')).to.include({ event_id: eventId, reply: 'final' });
    });

    it("answers INVALID_EVENT_ID for unknown, malformed, another agent's and finished events, and the event goes on", async function () {
      const bridge = await startTestBridge();
      const { org, agent, appClient, agentClient } = await bridge.pair();
      const second = await bridge.agent(org.org_id, 'Second Agent');
      const secondClient = await bridge.connectAgent(second.token);
      const { event_id: eventId } = await startEvent(appClient, agentClient, agent.agent_id);
      const naming = (event_id: unknown) => [
        { type: 'token', event_id, token: 'x' },
        { type: 'reply', event_id, content: 'x', done: true },
        { type: 'error', event_id, error: 'x', code: 'AGENT_ERROR' },
      ];

      for (const frame of naming(UNKNOWN_EVENT_ID)) {
        agentClient.send(frame);
        expect((await agentError(agentClient, 'INVALID_EVENT_ID')).event_id).to.equal(UNKNOWN_EVENT_ID);
      }
      for (const malformed of ['not an id!', '', 'x'.repeat(129), 42, null]) {
        for (const frame of naming(malformed)) {
          agentClient.send(frame);
          const error = await agentError(agentClient, 'INVALID_EVENT_ID');
          expect(error, JSON.stringify(frame)).to.not.have.property('event_id');
        }
      }
      // The second agent of the same organization may not touch the first one's event.
      for (const frame of naming(eventId)) {
        secondClient.send(frame);
        expect((await agentError(secondClient, 'INVALID_EVENT_ID')).event_id).to.equal(eventId);
      }
      await appClient.expectNothingBeforePong();
      await agentClient.expectNothingBeforePong();

      agentClient.send({ type: 'token', event_id: eventId, token: 'mine' });
      expect((await appClient.expect('token')).token).to.equal('mine');
      agentClient.send({ type: 'reply', event_id: eventId, content: '', done: true });
      const reply = await appClient.expect('reply');
      expect(reply).to.include({ event_id: eventId, reply: 'mine' });
      expect(reply.metadata.tokens_used).to.equal(1);

      // Finished: every later message about it is refused, and the app hears nothing more.
      for (const frame of naming(eventId)) {
        agentClient.send(frame);
        expect((await agentError(agentClient, 'INVALID_EVENT_ID')).event_id).to.equal(eventId);
      }
      // An event that ended with the agent's error is finished too.
      const { event_id: failedId } = await startEvent(appClient, agentClient, agent.agent_id);
      agentClient.send({ type: 'error', event_id: failedId, error: 'broken', code: 'AGENT_ERROR' });
      expect(await appError(appClient, 'AGENT_ERROR')).to.include({ event_id: failedId });
      for (const frame of naming(failedId)) {
        agentClient.send(frame);
        expect((await agentError(agentClient, 'INVALID_EVENT_ID')).event_id).to.equal(failedId);
      }
      await appClient.expectNothingBeforePong();
      await agentClient.expectNothingBeforePong();
      await secondClient.expectNothingBeforePong();
    });

    it('drops a token fragment over tokenFragmentMaxBytes UTF-8 bytes with MESSAGE_TOO_LARGE, forwards one of exactly the limit, and the event finishes', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id: eventId } = await startEvent(appClient, agentClient, agent.agent_id);
      const max = LIMITS.tokenFragmentMaxBytes;

      const overByOne = 'é'.repeat(max / 2) + 'x';
      expect(utf8(overByOne)).to.equal(max + 1);
      expect(overByOne.length, 'a character count would pass').to.be.at.most(max);
      agentClient.send({ type: 'token', event_id: eventId, token: overByOne });
      agentClient.send({ type: 'token', event_id: eventId, token: 'next' });
      const tooLarge = await agentError(agentClient, 'MESSAGE_TOO_LARGE');
      expect(tooLarge.event_id).to.equal(eventId);
      expect(tooLarge.error).to.include(String(max));
      expect(await appClient.expect('token')).to.deep.equal({
        type: 'token',
        event_id: eventId,
        agent_id: agent.agent_id,
        token: 'next',
      });

      const euroOver = '€'.repeat(Math.ceil(max / 3) + 1);
      expect(utf8(euroOver)).to.be.above(max);
      agentClient.send({ type: 'token', event_id: eventId, token: euroOver });
      expect((await agentError(agentClient, 'MESSAGE_TOO_LARGE')).event_id).to.equal(eventId);

      const exact = 'é'.repeat(max / 2);
      expect(utf8(exact)).to.equal(max);
      agentClient.send({ type: 'token', event_id: eventId, token: exact });
      expect((await appClient.expect('token')).token).to.equal(exact);
      agentClient.send({ type: 'token', event_id: eventId, token: '' });
      expect((await appClient.expect('token')).token).to.equal('');

      await agentClient.expectNothingBeforePong();
      agentClient.send({ type: 'reply', event_id: eventId, content: '', done: true });
      const reply = await appClient.expect('reply');
      expect(reply.reply).to.equal('next' + exact);
      expect(reply.metadata.tokens_used, 'only forwarded fragments count').to.equal(3);
      await appClient.expectNothingBeforePong();
      expect(agentClient.isClosed).to.equal(false);
    });
  });

  describe('robustness', function () {
    interface Hostile {
      name: string;
      frame: string | Buffer;
      /** The code of the one `error` each endpoint answers. */
      app: ErrorCode;
      agent: ErrorCode;
    }
    const nest = (levels: number, open: string, close: string, inner = '1') =>
      open.repeat(levels) + inner + close.repeat(levels);
    const DEEP = 10_000;
    const LONG = LIMITS.frameMaxBytes - 4096;
    const ghostEvent = (payload: string) =>
      `{"type":"event","agent_id":"${GHOST_AGENT}","thread_id":"t","payload":${payload}}`;
    const HOSTILE: Hostile[] = [
      { name: 'empty text frame', frame: '', app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      { name: 'whitespace only', frame: ' \n\t\r ', app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      { name: 'a NUL character', frame: '\u0000', app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      { name: 'null', frame: 'null', app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      {
        name: 'an array holding a valid message',
        frame: '[{"type":"ping"}]',
        app: 'INVALID_JSON',
        agent: 'INVALID_JSON',
      },
      { name: `${DEEP} nested arrays`, frame: nest(DEEP, '[', ']'), app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      {
        name: `${DEEP} nested objects`,
        frame: nest(DEEP, '{"a":', '}'),
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: `an event whose payload nests ${DEEP} levels`,
        frame: ghostEvent(nest(DEEP, '{"a":', '}', '[]')),
        app: 'AGENT_NOT_FOUND',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: `a reply whose metadata nests ${DEEP} levels`,
        frame: `{"type":"reply","event_id":"${UNKNOWN_EVENT_ID}","content":"","done":true,"metadata":{"deep":${nest(DEEP, '[', ']')}}}`,
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_EVENT_ID',
      },
      { name: 'a 100000-digit number', frame: '9'.repeat(100_000), app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      {
        name: 'huge and tiny numbers in a payload',
        frame: ghostEvent(`{"big":1e999,"neg":-1e999,"tiny":1e-999,"long":${'1'.repeat(400)}}`),
        app: 'AGENT_NOT_FOUND',
        agent: 'INVALID_MESSAGE',
      },
      { name: 'a huge number as type', frame: '{"type":1e999}', app: 'INVALID_MESSAGE', agent: 'INVALID_MESSAGE' },
      {
        name: 'a __proto__ key only',
        frame: '{"__proto__":{"polluted":1}}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'an event with a __proto__ payload',
        frame: '{"type":"event","payload":{"__proto__":{"polluted":1}}}',
        app: 'INVALID_AGENT_ID',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a ping with a __proto__ field',
        frame: '{"type":"ping","__proto__":{"polluted":1}}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'constructor.prototype',
        frame: '{"type":"discover","constructor":{"prototype":{"polluted":1}}}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'type __proto__',
        frame: '{"type":"__proto__","agent_id":"x"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'type constructor',
        frame: '{"type":"constructor","event_id":"x"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'type hasOwnProperty',
        frame: '{"type":"hasOwnProperty"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'ids named after Object members',
        frame:
          '{"type":"event","agent_id":"constructor","thread_id":"__proto__","payload":{"toString":null,"valueOf":1}}',
        app: 'AGENT_NOT_FOUND',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a token for event __proto__',
        frame: '{"type":"token","event_id":"__proto__","token":"x"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_EVENT_ID',
      },
      {
        name: 'nulls everywhere',
        frame: '{"type":"event","agent_id":null,"thread_id":null,"payload":null}',
        app: 'INVALID_AGENT_ID',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a null type',
        frame: '{"type":null,"event_id":null,"token":null}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'duplicate type keys',
        frame: '{"type":"ping","type":"bogus"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'unicode garbage as text',
        frame: '\u202e\ufeff\u{1F600}\u0301\uffff\u{10FFFF}',
        app: 'INVALID_JSON',
        agent: 'INVALID_JSON',
      },
      {
        name: 'unicode look-alike ids',
        frame: '{"type":"event","agent_id":"ａｇｅｎｔ","thread_id":"\u202e\ufeff","payload":{}}',
        app: 'INVALID_AGENT_ID',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'an escaped unpaired surrogate thread_id',
        frame: ghostEvent('{}').replace('"t"', '"\\udc00"'),
        app: 'INVALID_THREAD_ID',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'an escaped NUL in type',
        frame: '{"type":"ping\\u0000"}',
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a JSON string near the frame limit',
        frame: `"${'x'.repeat(LONG)}"`,
        app: 'INVALID_JSON',
        agent: 'INVALID_JSON',
      },
      { name: 'plain text near the frame limit', frame: 'x'.repeat(LONG), app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      {
        name: 'a long unknown field',
        frame: `{"type":"ping","pad":"${'x'.repeat(LONG)}"}`,
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a long unknown type',
        frame: `{"type":"${'y'.repeat(LONG / 2)}"}`,
        app: 'INVALID_MESSAGE',
        agent: 'INVALID_MESSAGE',
      },
      {
        name: 'a long payload string',
        frame: ghostEvent(`{"s":"${'z'.repeat(LONG)}"}`),
        app: 'PAYLOAD_TOO_LARGE',
        agent: 'INVALID_MESSAGE',
      },
      { name: 'an empty binary frame', frame: Buffer.alloc(0), app: 'INVALID_JSON', agent: 'INVALID_JSON' },
      {
        name: 'random binary bytes',
        frame: Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00, 0xff, 0x7b, 0x7d]),
        app: 'INVALID_JSON',
        agent: 'INVALID_JSON',
      },
    ];

    /** Sends one hostile frame then a ping: exactly one error (of the expected code) must come before the pong. */
    async function answerTo(
      client: AppClient | AgentClient,
      item: Hostile,
      code: ErrorCode,
    ): Promise<string | undefined> {
      if (typeof item.frame === 'string') client.send(item.frame);
      else client.sendBinary(item.frame);
      client.send({ type: 'ping' });
      const first = await client.waitForMessage(5000);
      if (first.type !== 'error') return `${item.name}: expected ${code}, got ${first.type}`;
      const second = await client.waitForMessage(5000);
      if (second.type !== 'pong')
        return `${item.name}: expected one answer, got a second ${JSON.stringify(second).slice(0, 200)}`;
      return first.code === code
        ? undefined
        : `${item.name}: expected ${code}, got ${first.code} (${first.error.slice(0, 200)})`;
    }

    async function fullFlow(
      bridge: TestBridge,
      appClient: AppClient,
      agentClient: AgentClient,
      agentId: string,
    ): Promise<void> {
      const payloadText = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"q":"still fine?"}';
      appClient.send(`{"type":"event","agent_id":"${agentId}","thread_id":"after-the-storm","payload":${payloadText}}`);
      const { event_id } = await appClient.expect('accepted');
      const delivered = await agentClient.expect('event');
      expect(delivered.event_id).to.equal(event_id);
      expect(JSON.stringify(delivered.payload), 'the payload arrives as sent').to.equal(payloadText);
      agentClient.send({ type: 'token', event_id, token: 'yes' });
      expect((await appClient.expect('token')).token).to.equal('yes');
      bridge.clock.advance(5);
      agentClient.send({ type: 'reply', event_id, content: 'Yes.', done: true });
      const reply = await appClient.expect('reply');
      expect(reply).to.include({ event_id, agent_id: agentId, reply: 'Yes.' });
      expect(JSON.stringify(reply.payload)).to.equal(payloadText);
    }

    it('survives a table of hostile frames on both endpoints: every connection still answers, and a new pair completes an event', async function () {
      this.timeout(60_000);
      expect(HOSTILE.length).to.be.at.least(15);
      for (const item of HOSTILE)
        if (typeof item.frame === 'string') expect(utf8(item.frame), item.name).to.be.below(LIMITS.frameMaxBytes);

      const bridge = await startTestBridge();
      const first = await bridge.pair();
      const problems: string[] = [];
      for (const item of HOSTILE) {
        const appProblem = await answerTo(first.appClient, item, item.app);
        if (appProblem) problems.push(`app: ${appProblem}`);
        const agentProblem = await answerTo(first.agentClient, item, item.agent);
        if (agentProblem) problems.push(`agent: ${agentProblem}`);
      }
      expect(problems).to.deep.equal([]);

      await first.appClient.expectNothingBeforePong();
      await first.agentClient.expectNothingBeforePong();
      expect(first.appClient.isClosed || first.agentClient.isClosed).to.equal(false);
      await fullFlow(bridge, first.appClient, first.agentClient, first.agent.agent_id);

      const second = await bridge.pair();
      await fullFlow(bridge, second.appClient, second.agentClient, second.agent.agent_id);
      await second.appClient.expectNothingBeforePong();
      await second.agentClient.expectNothingBeforePong();

      expect(({} as any).polluted).to.equal(undefined);
      expect((Object.prototype as any).polluted).to.equal(undefined);
    });
  });
});
