// The constants of the bus between the nodes of one bridge (O16), from the AsyncAPI document's internal channel:
// the version every message carries, the kinds and the control ops this version knows. A receiving node checks the
// first two with a comparison and a set lookup instead of a validator (fragments cross the bus one message each).
// `raw` is the document's component schemas as written: the extensions (`x-when-absent`) are lifted out of `defs`.
// The generator refuses a bus message that does not carry its kind and the version, so none can be sent without.
import type { Definitions, Schema } from './schemas.js';
import { memberTypes } from './schemas.js';

const UNION = 'BusMessage';
const VERSION = 'BusVersion';
const CONTROL_OP = 'ControlOp';

function fail(message: string): never {
  throw new Error(`asyncapi.yaml: ${message}`);
}

function checkMessages(defs: Definitions): void {
  for (const name of defs.internalUnions.get(UNION) ?? fail(`the bus channel's operations derive no ${UNION}`)) {
    const schema = defs.all.get(name)!;
    const required: string[] = schema.required ?? [];
    if (typeof schema.properties?.k?.const !== 'string' || !required.includes('k'))
      fail(`${name}: a bus message needs a required \`k\` constant, its kind`);
    if (schema.properties?.v?.$ref !== `#/definitions/${VERSION}` || !required.includes('v'))
      fail(`${name}: a bus message needs a required \`v\`: $ref ${VERSION}`);
  }
}

/** The discriminating constants of a named `oneOf`, e.g. each control op's `op`. */
function tagValues(defs: Definitions, name: string, tag: string): string[] {
  const schema: Schema = defs.all.get(name) ?? fail(`${name} is missing`);
  if (schema.discriminator?.propertyName !== tag) fail(`${name} must be a oneOf with discriminator: ${tag}`);
  return (schema.oneOf as Schema[]).map((member) => {
    const target = defs.all.get(String(member.$ref).replace('#/definitions/', ''));
    return typeof target?.properties?.[tag]?.const === 'string'
      ? (target.properties[tag].const as string)
      : fail(`${name}: each member needs a \`${tag}\` constant`);
  });
}

export function busConstants(defs: Definitions, raw: Schema): string {
  checkMessages(defs);
  const version: unknown = defs.all.get(VERSION)?.const;
  if (!Number.isInteger(version)) fail(`${VERSION} needs an integer const: the version of the bus`);
  const whenAbsent: unknown = raw[VERSION]?.['x-when-absent'];
  if (!Number.isInteger(whenAbsent) || (whenAbsent as number) > (version as number))
    fail(`${VERSION} needs x-when-absent: the version of a message without \`v\`, at most its const`);
  const kinds = memberTypes(defs, UNION);
  return [
    `/** The bus version of this release (${VERSION}): every bus message carries it as \`v\`; a node drops another (O16). */`,
    `export const BUS_VERSION = ${String(version)};`,
    '',
    `/** The version of a bus message without \`v\` (sent by releases before the bus was versioned, O16). */`,
    `export const BUS_VERSION_WHEN_ABSENT: number = ${String(whenAbsent)};`,
    '',
    `/** The kind (\`k\`) of every bus message this version knows; a node drops another (O16). */`,
    `export const BUS_KINDS = ${JSON.stringify(kinds)} as const satisfies readonly ${UNION}['k'][];`,
    '',
    `/** The op of every control question (\`ctl\`) this version knows; another is answered \`unknown\` (O16). */`,
    `export const CONTROL_OPS = ${JSON.stringify(tagValues(defs, CONTROL_OP, 'op'))} as const satisfies readonly ${CONTROL_OP}['op'][];`,
    '',
  ].join('\n');
}
