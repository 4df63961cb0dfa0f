// The robustness cases' shape (the runner's contract) and the helpers that write an expectation.
import type { ErrorCode } from '../../generated/index.js';
import type { Endpoint } from './mutations.js';
import type { SpecModel } from './spec-model.js';

/** What the bridge must do with the case's last frame, judged in the run's profile. */
export type Expectation =
  | { kind: 'error'; code: ErrorCode; requirement: string }
  | { kind: 'any-error'; requirement: string }
  | { kind: 'error-or-silence'; requirement: string }
  | { kind: 'accepted'; requirement: string };

export type Category =
  | 'not-json'
  | 'not-object'
  | 'unknown-type'
  | 'missing-field'
  | 'wrong-type'
  | 'violation'
  | 'extra-field'
  | 'limit'
  | 'unicode'
  | 'binary'
  | 'interleaving';

export const CATEGORIES: readonly Category[] = [
  'not-json',
  'not-object',
  'unknown-type',
  'missing-field',
  'wrong-type',
  'violation',
  'extra-field',
  'limit',
  'unicode',
  'binary',
  'interleaving',
];

export interface InputCase {
  /** Stable and readable: 'app.event.thread_id.wrong-type.number', 'agent.token.token.bytes.limit+1'. */
  id: string;
  endpoint: Endpoint;
  /** Needs an event in flight from the canary-free fixture app to the fixture agent first (`${event_id}`). */
  needsEvent: boolean;
  /**
   * The frames sent in order; text may contain the placeholders ${event_id}, ${agent_id}, ${app_id} and
   * ${thread_id_for_key:N} (a thread_id that makes the stored session key N code points): fillPlaceholders.
   */
  frames: ({ text: string } | { binary: string /* base64 */ })[];
  expect: Expectation;
  /** The profile source of what is judged: 'protocol' or 'decision' (the requirement's source). */
  source: 'protocol' | 'decision';
  /** One line a person reads in the report: what is wrong with the input. */
  why: string;
  /** What kind of hostile input it is; the sample keeps one case of each. */
  category: Category;
  /** The message type the judged frame claims to be (event, token …), when it is one of the endpoint's. */
  message?: string;
  /** Our decision's stricter expectation (source decision, judged with --profile bridge), where it differs. */
  ours?: Expectation;
  /** The judged frame is a message of its endpoint by the open schema (placeholders filled). */
  conforms: boolean;
  /** The protocol lets the bridge take the frame (answer `accepted`, forward it): only an error is then not required. */
  mayAccept?: boolean;
  /** The protocol lets the bridge refuse the frame by closing the connection (W2: 1009 over frameMaxBytes). */
  mayClose?: boolean;
}

export interface GenerateOptions {
  seed: number;
  /** A sample of this many cases (at least one per message type and per category); all of them when absent. */
  cases?: number;
  /** The spec to derive from; this repository's by default. */
  spec?: SpecModel;
}

export const err = (code: ErrorCode, requirement: string): Expectation => ({ kind: 'error', code, requirement });
export const anyErr = (requirement: string): Expectation => ({ kind: 'any-error', requirement });
export const quiet = (requirement: string): Expectation => ({ kind: 'error-or-silence', requirement });

/** The requirement that judges an endpoint's frame that is valid JSON but no message, and the connection staying. */
export const NO_MESSAGE = { app: 'ERR-011', agent: 'AGT-008' } as const;
export const KEEPS_CONNECTION = { app: 'ERR-010', agent: 'AGT-009' } as const;

export type Judgement = Pick<InputCase, 'expect' | 'source'> & { ours?: Expectation };
export const protocol = (expect: Expectation, ours?: Expectation): Judgement => ({
  expect,
  source: 'protocol',
  ...(ours ? { ours } : {}),
});
export const decision = (expect: Expectation): Judgement => ({ expect, source: 'decision' });

/** A case before its needsEvent is worked out from its frames. */
export type Draft = Omit<InputCase, 'needsEvent' | 'source' | 'expect'> & Judgement & { needsEvent?: boolean };
