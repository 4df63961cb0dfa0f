// The step language's types, from the generated schema types (spec/conformance.yaml, ScenarioStep): a step is an
// object with one key, its kind. `unpack` turns it into `{ kind, args }`, a union TypeScript narrows by `kind`.
import type { ScenarioStep } from '../../generated/index.js';

export type Step = ScenarioStep;

/** Every step kind: the keys of the members of ScenarioStep. */
export type StepKind = Step extends infer S ? (S extends unknown ? keyof S : never) : never;

/** The fields of a step of kind K. */
export type StepArgs<K extends StepKind> = Extract<Step, Record<K, unknown>>[K];

/** Kind -> fields, the shape handler maps are typed by (so a missing kind is a type error). */
export type StepArgsMap = { [K in StepKind]: StepArgs<K> };

export type UnpackedStep = { [K in StepKind]: { kind: K; args: StepArgs<K> } }[StepKind];

export function unpack(step: Step): UnpackedStep {
  const [kind, args] = Object.entries(step)[0]!;
  return { kind, args } as UnpackedStep;
}
