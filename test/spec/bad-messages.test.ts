// Bad messages per direction must fail their union's validator with an error that names the field and the rule.
import { expect } from 'chai';
import {
  describeErrors,
  errorField,
  FIELD_ERROR_CODES,
  validateAgentToServiceMessage,
  validateAppToServiceMessage,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';

const EVENT_ID = '01JQ7ZK3M4N5P6Q7R8S9T0V1W2';
const SESSION_KEY = 'svc:tutor-7k2m:classroom-app:lesson-42';
const event = { type: 'event', agent_id: 'tutor-7k2m', thread_id: 'lesson-42', payload: { kind: 'q' } };
const reply = {
  type: 'reply',
  event_id: EVENT_ID,
  agent_id: 'tutor-7k2m',
  thread_id: 'lesson-42',
  reply: 'hi',
  payload: {},
  metadata: { tokens_used: 1, model: 'm', latency_ms: 3, session_key: SESSION_KEY },
};
const agentReply = { type: 'reply', event_id: EVENT_ID, content: '', done: true };
const delivered = {
  type: 'event',
  event_id: EVENT_ID,
  app_id: 'classroom-app',
  thread_id: 'lesson-42',
  session_key: 'svc:classroom-app:lesson-42',
  payload: {},
};

const without = <T extends object>(o: T, key: keyof T) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

type Case = [what: string, message: unknown, expected: string];

const TABLE: [string, Validator<unknown>, Case[]][] = [
  [
    'app -> service',
    validateAppToServiceMessage,
    [
      ['event without agent_id', without(event, 'agent_id'), 'agent_id: is required'],
      ['agent_id of the wrong type', { ...event, agent_id: 42 }, 'agent_id: must be string'],
      [
        'agent_id with capitals and underscores',
        { ...event, agent_id: 'Tutor_1' },
        'agent_id: has characters that are not allowed',
      ],
      [
        'agent_id of 65 characters',
        { ...event, agent_id: 'a'.repeat(65) },
        'agent_id: must NOT have more than 64 characters',
      ],
      ['empty thread_id', { ...event, thread_id: '' }, 'thread_id: must NOT have fewer than 1 characters'],
      [
        'thread_id of 122 characters',
        { ...event, thread_id: 't'.repeat(122) },
        'thread_id: must NOT have more than 121 characters',
      ],
      [
        'thread_id with a control character',
        { ...event, thread_id: 'lesson\u0007' },
        'thread_id: has characters that are not allowed',
      ],
      [
        'thread_id with a C1 control character',
        { ...event, thread_id: 'lesson\u0085' },
        'thread_id: has characters that are not allowed',
      ],
      [
        'thread_id with an unpaired surrogate',
        { ...event, thread_id: 'lesson\ud800' },
        'thread_id: has characters that are not allowed',
      ],
      ['payload that is a string', { ...event, payload: 'hello' }, 'payload: must be object'],
      ['payload that is an array', { ...event, payload: [1] }, 'payload: must be object'],
      ['event without payload', without(event, 'payload'), 'payload: is required'],
      ['unknown type', { type: 'events' }, 'type: "events" is not a message type of this endpoint'],
      [
        'a type of the other direction',
        { type: 'accepted' },
        'type: "accepted" is not a message type of this endpoint',
      ],
      ['no type', { agent_id: 'tutor-7k2m' }, 'type: is required and must be a string'],
      ['a field the spec does not have', { ...event, priority: 1 }, 'priority: is not a field of this message'],
      ['discover with a field', { type: 'discover', filter: 'x' }, 'filter: is not a field of this message'],
    ],
  ],
  [
    'service -> app',
    validateServiceToAppMessage,
    [
      [
        'accepted whose status is not accepted',
        { type: 'accepted', event_id: EVENT_ID, agent_id: 'tutor-7k2m', session_key: SESSION_KEY, status: 'ok' },
        'status: must be "accepted"',
      ],
      [
        'accepted with the agent form of the session key',
        {
          type: 'accepted',
          event_id: EVENT_ID,
          agent_id: 'tutor-7k2m',
          session_key: 'svc:classroom-app',
          status: 'accepted',
        },
        'session_key: has characters that are not allowed',
      ],
      ['reply without metadata', without(reply, 'metadata'), 'metadata: is required'],
      [
        'reply metadata without latency_ms',
        { ...reply, metadata: without(reply.metadata, 'latency_ms') },
        'metadata.latency_ms: is required',
      ],
      [
        'session key of 256 characters',
        {
          ...reply,
          metadata: { ...reply.metadata, session_key: `${SESSION_KEY}${'x'.repeat(256 - SESSION_KEY.length)}` },
        },
        'metadata.session_key: must NOT have more than 255 characters',
      ],
      [
        'error with an unknown code',
        { type: 'error', error: 'x', code: 'NOPE' },
        'code: must be one of "AGENT_NOT_FOUND"',
      ],
      ['error without text', { type: 'error', code: 'AGENT_OFFLINE' }, 'error: is required'],
      [
        'retry_after_seconds of 0',
        { type: 'error', error: 'x', code: 'RATE_LIMIT_EXCEEDED', metadata: { retry_after_seconds: 0 } },
        'metadata.retry_after_seconds: must be > 0',
      ],
      ['token without agent_id', { type: 'token', event_id: EVENT_ID, token: 'a' }, 'agent_id: is required'],
      [
        'agents entry without name',
        { type: 'agents', agents: [{ agent_id: 'a', description: '' }] },
        'agents.0.name: is required',
      ],
      [
        'event_id of 129 characters',
        { type: 'token', event_id: 'E'.repeat(129), agent_id: 'a', token: 'x' },
        'event_id: must NOT have more than 128 characters',
      ],
    ],
  ],
  [
    'agent -> service',
    validateAgentToServiceMessage,
    [
      ['reply whose done is false', { ...agentReply, done: false }, 'done: must be true'],
      ['reply without content', without(agentReply, 'content'), 'content: is required'],
      ['reply with content of the wrong type', { ...agentReply, content: null }, 'content: must be string'],
      [
        'token with a spaced event_id',
        { type: 'token', event_id: 'evt 1', token: 'x' },
        'event_id: has characters that are not allowed',
      ],
      ['token without token', { type: 'token', event_id: EVENT_ID }, 'token: is required'],
      [
        'error with a lowercase code',
        { type: 'error', event_id: EVENT_ID, error: 'x', code: 'oops' },
        'code: has characters that are not allowed',
      ],
      [
        'reply metadata with a negative token count',
        { ...agentReply, metadata: { tokens_used: -1 } },
        'metadata.tokens_used: must be >= 0',
      ],
      ['an app message', { type: 'discover' }, 'type: "discover" is not a message type of this endpoint'],
    ],
  ],
  [
    'service -> agent',
    validateServiceToAgentMessage,
    [
      ['event without payload', without(delivered, 'payload'), 'payload: is required'],
      ['event without app_id', without(delivered, 'app_id'), 'app_id: is required'],
      [
        'event with the stored session key form missing a thread',
        { ...delivered, session_key: 'svc:classroom-app' },
        'session_key: has characters that are not allowed',
      ],
      ['pong with a field', { type: 'pong', at: 1 }, 'at: is not a field of this message'],
      ['error with an unknown code', { type: 'error', error: 'x', code: 'OOPS' }, 'code: must be one of'],
    ],
  ],
];

describe('bad messages fail with a readable error', function () {
  for (const [direction, validate, cases] of TABLE) {
    describe(direction, function () {
      for (const [what, message, expected] of cases) {
        it(`rejects ${what}`, function () {
          expect(validate(message), `${what} was accepted`).to.equal(false);
          expect(describeErrors(validate.errors)).to.include(expected);
        });
      }
    });
  }
});

describe('what the validators accept at the edges', function () {
  it('counts thread_id in code points: 121 emoji pass', function () {
    expect(
      validateAppToServiceMessage({ ...event, thread_id: '😀'.repeat(121) }),
      describeErrors(validateAppToServiceMessage.errors),
    ).to.equal(true);
  });

  it('accepts a thread_id with colons and non-ASCII letters', function () {
    expect(validateAppToServiceMessage({ ...event, thread_id: 'channel:général:42' })).to.equal(true);
  });

  it('accepts agent_id of exactly 64 characters', function () {
    expect(validateAppToServiceMessage({ ...event, agent_id: 'a'.repeat(64) })).to.equal(true);
  });

  it('lets an agent add its own reply metadata fields', function () {
    expect(validateAgentToServiceMessage({ ...agentReply, metadata: { model: 'm', cost_usd: 0.01 } })).to.equal(true);
  });

  it('leaves the payload opaque: any JSON object passes', function () {
    expect(
      validateAppToServiceMessage({ ...event, payload: { nested: [{ a: null }], 'weird key': '\u0000' } }),
    ).to.equal(true);
  });
});

describe('field error codes', function () {
  it('maps the first failing field of an event to its spec code', function () {
    const codeFor = (message: unknown) => {
      expect(validateAppToServiceMessage(message)).to.equal(false);
      const field = errorField(validateAppToServiceMessage.errors![0]!).split('.')[0]!;
      return (FIELD_ERROR_CODES.AppToServiceMessage.event as Record<string, string>)[field] ?? 'INVALID_MESSAGE';
    };
    expect(codeFor({ ...event, agent_id: 'Bad!' })).to.equal('INVALID_AGENT_ID');
    expect(codeFor(without(event, 'agent_id'))).to.equal('INVALID_AGENT_ID');
    expect(codeFor({ ...event, thread_id: 7 })).to.equal('INVALID_THREAD_ID');
    expect(codeFor({ ...event, thread_id: '' })).to.equal('INVALID_THREAD_ID');
    expect(codeFor({ ...event, payload: 1 })).to.equal('INVALID_MESSAGE');
  });
});
