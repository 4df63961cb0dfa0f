// Every example the spec shows must be a valid message or body: third parties copy them.
import { expect } from 'chai';
import { describeErrors, validators, type Validator } from '../../generated/index.js';
import { BUS_KINDS, MESSAGE_TYPES } from '../../generated/index.js';
import { asyncapi, openapi, resolveLocal, schemaName, walk } from '../helpers/raw-spec.js';

type Name = keyof typeof validators;

function expectValid(validate: Validator<unknown>, example: unknown, what: string): void {
  const ok = validate(example);
  expect(ok, `${what}: ${describeErrors(validate.errors)}`).to.equal(true);
}

function validatorOf(name: string | undefined): Validator<unknown> {
  expect(name, 'example must sit next to a $ref to a component schema').to.be.a('string');
  const validate = validators[name as Name] as Validator<unknown> | undefined;
  expect(validate, `no generated validator for ${name}`).to.not.equal(undefined);
  return validate!;
}

/** The direction union each message schema belongs to (on the internal bus between nodes, BusMessage). */
const unionOf = new Map<string, Name>();
for (const [channel, byAction] of [
  ['app', { receive: 'AppToServiceMessage', send: 'ServiceToAppMessage' }],
  ['agent', { receive: 'AgentToServiceMessage', send: 'ServiceToAgentMessage' }],
  ['bus', { receive: 'BusMessage', send: 'BusMessage' }],
] as const) {
  for (const op of Object.values<any>(asyncapi.operations)) {
    if (op.channel.$ref !== `#/channels/${channel}`) continue;
    for (const ref of op.messages) {
      const message = resolveLocal(asyncapi, resolveLocal(asyncapi, ref));
      const union = byAction[op.action as 'receive' | 'send'];
      unionOf.set(`${union}:${schemaName(message.payload.$ref)}`, union);
    }
  }
}

describe('spec examples', function () {
  describe('AsyncAPI component schemas', function () {
    for (const [name, schema] of Object.entries<any>(asyncapi.components.schemas)) {
      (schema.examples ?? []).forEach((example: unknown, i: number) => {
        it(`${name} example ${i + 1} is valid`, function () {
          expectValid(validatorOf(name), example, name);
        });
      });
    }
  });

  describe('AsyncAPI messages, against their schema and their direction', function () {
    for (const [key, message] of Object.entries<any>(asyncapi.components.messages)) {
      const name = schemaName(message.payload.$ref)!;
      const unions = [...unionOf].filter(([k]) => k.endsWith(`:${name}`)).map(([, u]) => u);
      it(`${key} belongs to at least one direction`, function () {
        expect(unions).to.not.be.empty;
      });
      for (const example of message.examples ?? []) {
        it(`${key} example "${example.name}" is a valid ${name} and a valid ${unions.join(' and ')}`, function () {
          expectValid(validatorOf(name), example.payload, name);
          for (const union of unions) {
            expectValid(validators[union] as Validator<unknown>, example.payload, union);
            if (union === 'BusMessage') expect(BUS_KINDS).to.include(example.payload.k);
            else expect(MESSAGE_TYPES[union as keyof typeof MESSAGE_TYPES]).to.include(example.payload.type);
          }
        });
      }
    }
  });

  describe('OpenAPI component schemas', function () {
    for (const [name, schema] of Object.entries<any>(openapi.components.schemas)) {
      (schema.examples ?? []).forEach((example: unknown, i: number) => {
        it(`${name} example ${i + 1} is valid`, function () {
          expectValid(validatorOf(name), example, name);
        });
      });
    }
  });

  describe('OpenAPI request, response and parameter examples', function () {
    for (const [node, path] of walk(openapi)) {
      if (!('example' in node) || !node.schema) continue;
      const name = schemaName(node.schema.$ref);
      if (!name) continue;
      it(`${path.join(' ')} example is a valid ${name}`, function () {
        expectValid(validatorOf(name), node.example, path.join('.'));
      });
    }
    // A media type with several named examples (`examples: {name: {value}}`).
    for (const [node, path] of walk(openapi)) {
      if (!node.examples || Array.isArray(node.examples) || !node.schema) continue;
      const name = schemaName(node.schema.$ref);
      if (!name) continue;
      for (const [key, example] of Object.entries<any>(node.examples)) {
        it(`${path.join(' ')} example "${key}" is a valid ${name}`, function () {
          expectValid(validatorOf(name), example.value, `${path.join('.')}.${key}`);
        });
      }
    }
  });
});
