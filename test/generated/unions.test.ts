// The per-direction unions must narrow on `type` (the bus's between nodes on `k`): an exhaustive switch compiles
// (npm run typecheck checks this file), a missing case does not, and at run time each example lands in its own case.
import { expect } from 'chai';
import type {
  AgentToServiceMessage,
  AppToServiceMessage,
  BusMessage,
  ServiceToAgentMessage,
  ServiceToAppMessage,
} from '../../generated/index.js';
import { BUS_KINDS, CONTROL_OPS, MESSAGE_TYPES, validators } from '../../generated/index.js';
import { asyncapi, resolveLocal } from '../helpers/raw-spec.js';

function unreachable(message: never): never {
  throw new Error(`unhandled message ${JSON.stringify(message)}`);
}

function appToService(m: AppToServiceMessage): string {
  switch (m.type) {
    case 'event':
      return `${m.agent_id}/${m.thread_id}`;
    case 'discover':
      return 'discover';
    case 'resume':
      return `${m.event_id}@${m.after_seq}`;
    case 'cancel':
      return m.event_id;
    case 'ping':
      return 'ping';
    default:
      return unreachable(m);
  }
}

function serviceToApp(m: ServiceToAppMessage): string {
  switch (m.type) {
    case 'accepted':
      return m.session_key;
    case 'token':
      return m.token;
    case 'reply':
      return `${m.reply}:${m.metadata.latency_ms}`;
    case 'error':
      return m.code;
    case 'agents':
      return m.agents.map((a) => a.agent_id).join(',');
    case 'pong':
      return 'pong';
    default:
      return unreachable(m);
  }
}

function agentToService(m: AgentToServiceMessage): string {
  switch (m.type) {
    case 'token':
      return m.token;
    case 'reply':
      return m.done ? m.content : 'never';
    case 'error':
      return m.code;
    case 'ping':
      return 'ping';
    default:
      return unreachable(m);
  }
}

function serviceToAgent(m: ServiceToAgentMessage): string {
  switch (m.type) {
    case 'event':
      return m.session_key;
    case 'cancel':
      return m.event_id;
    case 'error':
      return m.code;
    case 'pong':
      return 'pong';
    default:
      return unreachable(m);
  }
}

function bus(m: BusMessage): string {
  switch (m.k) {
    case 'to-agent':
      return m.frame;
    case 'to-agent-ack':
      return `${m.e}:${m.ok}`;
    case 'agent-msg':
      return m.msg.type;
    case 'agent':
      return `${m.id}@${m.stamp}`;
    case 'app':
      return m.id;
    case 'hello':
    case 'cut':
      return m.k;
    case 'snapshot':
      return m.agents.map(([id]) => id).join(',');
    case 'resume':
      return m.r.event_id;
    case 'to-app':
      return m.f.join('');
    case 'resumer-gone':
      return m.e;
    case 'cancel':
      return `${m.app}:${m.e}`;
    case 'cancel-agent':
      return `${m.agent}:${m.e}`;
    case 'ctl':
      return m.change.op;
    case 'ctl-ack':
      return String(m.id);
    default:
      return unreachable(m);
  }
}

// A switch that forgets a case must not compile; if the union stopped narrowing, this directive would be unused
// and `npm run typecheck` would fail on it.
export function forgetful(m: ServiceToAgentMessage): string {
  switch (m.type) {
    case 'event':
      return m.event_id;
    case 'pong':
      return 'pong';
    default:
      // @ts-expect-error ErrorToAgentMessage is not handled
      return unreachable(m);
  }
}

type Union = keyof typeof MESSAGE_TYPES | 'BusMessage';

const HANDLERS: Record<Union, (m: any) => string> = {
  AppToServiceMessage: appToService,
  ServiceToAppMessage: serviceToApp,
  AgentToServiceMessage: agentToService,
  ServiceToAgentMessage: serviceToAgent,
  BusMessage: bus,
};

const UNION_OF: Record<string, Record<string, Union>> = {
  app: { receive: 'AppToServiceMessage', send: 'ServiceToAppMessage' },
  agent: { receive: 'AgentToServiceMessage', send: 'ServiceToAgentMessage' },
  bus: { receive: 'BusMessage', send: 'BusMessage' },
};

/** What tells a union's members apart, and the values each union has. */
const TAG_OF = (union: Union) => (union === 'BusMessage' ? 'k' : 'type');
const VALUES: Record<Union, readonly string[]> = { ...MESSAGE_TYPES, BusMessage: BUS_KINDS };

describe('direction unions', function () {
  it('have exactly the message types the AsyncAPI operations name', function () {
    const fromSpec: Record<string, Set<string>> = {};
    for (const op of Object.values<any>(asyncapi.operations)) {
      const union = UNION_OF[op.channel.$ref.split('/').pop()]![op.action]!;
      for (const ref of op.messages) {
        const message = resolveLocal(asyncapi, resolveLocal(asyncapi, ref));
        (fromSpec[union] ??= new Set()).add(resolveLocal(asyncapi, message.payload).properties[TAG_OF(union)].const);
      }
    }
    for (const [union, types] of Object.entries(VALUES)) {
      expect([...types].sort(), union).to.deep.equal([...(fromSpec[union] ?? [])].sort());
    }
  });

  it('lists every control op of the bus, each of its own schema', function () {
    const ops = asyncapi.components.schemas.ControlOp.oneOf.map(
      (ref: unknown) => resolveLocal(asyncapi, ref).properties.op.const,
    );
    expect(CONTROL_OPS).to.deep.equal(ops);
  });

  it('route every message example to a case of each union that accepts it', function () {
    for (const [key, message] of Object.entries<any>(asyncapi.components.messages)) {
      for (const { payload } of message.examples) {
        const accepting = (Object.keys(HANDLERS) as (keyof typeof HANDLERS)[]).filter((u) => validators[u](payload));
        expect(accepting, `${key} fits no direction`).to.not.be.empty;
        for (const union of accepting) expect(HANDLERS[union](payload), `${key} in ${union}`).to.be.a('string');
      }
    }
  });
});
