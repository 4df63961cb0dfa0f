// The error texts come from the catalogue (x-error-catalogue messages in spec/asyncapi.yaml), never from the code
// that sends them: a caller names the code and the situation, and TypeScript asks for exactly the template's
// placeholders, so a text changed in the spec cannot lose a value or leave a `{name}` unfilled.
import { ERROR_MESSAGES } from '../../generated/index.js';

type Messages = typeof ERROR_MESSAGES;
export type MessageCode = keyof Messages;
export type Situation<C extends MessageCode> = keyof Messages[C] & string;

/** The `{name}`s of a template, as a union of names. */
type Placeholders<T> = T extends `${string}{${infer Name}}${infer Rest}` ? Name | Placeholders<Rest> : never;

type TemplateOf<C extends MessageCode, S extends Situation<C>> = Messages[C][S];

export type MessageParams<C extends MessageCode, S extends Situation<C>> = {
  [P in Placeholders<TemplateOf<C, S>>]: string | number;
};

/** The values a text needs after its code and situation: none, or an object with exactly its placeholders. */
export type TextArgs<C extends MessageCode, S extends Situation<C>> =
  Placeholders<TemplateOf<C, S>> extends never ? [] : [MessageParams<C, S>];

/** The catalogue's text for `code` in `situation`, its placeholders filled from `params`. */
export function errorText<C extends MessageCode, S extends Situation<C>>(
  code: C,
  situation: S,
  ...[params]: TextArgs<C, S>
): string {
  const template = (ERROR_MESSAGES[code] as Record<string, string>)[situation]!;
  const values = (params ?? {}) as Record<string, string | number>;
  return template.replace(/\{([a-z_]+)\}/g, (_, name: string) => String(values[name]));
}
