// generated/validators.cjs is reviewed as a diff: its names come from the definitions, not from Ajv's compile
// order, so a spec change shows as the code of the definitions it changed and nothing else.
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stableNames } from '../../tools/gen/stable-names.js';
import { compileValidators } from '../../tools/gen/validators.js';
import type { Definitions, Schema } from '../../tools/gen/schemas.js';

const ID: Schema = { title: 'Id', type: 'string', maxLength: 8, pattern: '^[a-z]+$' };
const NOTE: Schema = {
  title: 'Note',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'id'],
  properties: { type: { const: 'note' }, id: { $ref: '#/definitions/Id' }, at: { type: 'string', format: 'date-time' } },
};
const TREE: Schema = { title: 'Tree', type: 'object', properties: { id: { $ref: '#/definitions/Id' }, children: { type: 'array', items: { $ref: '#/definitions/Tree' } } } };

function definitions(schemas: Record<string, Schema>): Definitions {
  const all = new Map(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
  return { all, origin: new Map(), open: new Map(), unions: new Map(), internalUnions: new Map(), fieldErrorCodes: new Map() };
}

/** The module's blocks (helpers first, then one per definition), each headed by its first line. */
function blocks(code: string): Map<string, string> {
  return new Map(code.split('\n\n').map((block) => [block.split('\n')[0]!, block]));
}

function load(code: string): Record<string, ((data: unknown) => boolean) & { errors?: unknown[] }> {
  const file = join(mkdtempSync(join(tmpdir(), 'stable-names-')), 'validators.cjs');
  writeFileSync(file, code);
  return createRequire(import.meta.url)(file);
}

describe('the names of the generated validators', function () {
  it('are the names of the definitions, whatever order Ajv compiled them in', function () {
    const code = [
      '"use strict";',
      'exports.Note = validate3;',
      'const schema5 = {"type":"object","properties":{"id":{"$ref":"#/definitions/Id"}}};',
      'const schema6 = {"type":"string","pattern":"^[a-z]+$"};',
      'const pattern2 = new RegExp("^[a-z]+$", "u");',
      'const func1 = require("ajv/dist/runtime/ucs2length").default;',
      'function validate4(data){',
      'if(!pattern2.test(data) || func1(data) > 8){validate4.errors = [{message:"validate4 schema5"}];return false;}',
      'return true;',
      '}',
      'function validate3(data){',
      'const _errs1 = data.id;',
      'if(!validate4(data.id)){validate3.errors = validate4.errors;return false;}',
      'for(const key0 in data){if(key0.replace(/~/g, "~0").replace(/\\//g, "~1") === "x"){return schema5.properties.validate4;}}',
      'return true;',
      '}',
      'exports.Id = validate4;',
    ].join('\n');
    const owners = new Map([['validate3', 'Note'], ['schema5', 'Note'], ['validate4', 'Id'], ['schema6', 'Id']]);
    expect(stableNames(code, owners)).to.equal([
      '"use strict";',
      'const func_ucs2length = require("ajv/dist/runtime/ucs2length").default;',
      '',
      'exports.Id = validate_Id;',
      'const schema_Id = {"type":"string","pattern":"^[a-z]+$"};',
      'const pattern_Id = new RegExp("^[a-z]+$", "u");',
      'function validate_Id(data){',
      'if(!pattern_Id.test(data) || func_ucs2length(data) > 8){validate_Id.errors = [{message:"validate4 schema5"}];return false;}',
      'return true;',
      '}',
      '',
      'exports.Note = validate_Note;',
      'const schema_Note = {"type":"object","properties":{"id":{"$ref":"#/definitions/Id"}}};',
      'function validate_Note(data){',
      'const _errs1 = data.id;',
      'if(!validate_Id(data.id)){validate_Note.errors = validate_Id.errors;return false;}',
      'for(const key0 in data){if(key0.replace(/~/g, "~0").replace(/\\//g, "~1") === "x"){return schema_Note.properties.validate4;}}',
      'return true;',
      '}',
      '',
    ].join('\n'));
  });

  it('refuses a validator function that belongs to no definition', function () {
    const code = '"use strict";\nfunction validate7(data){\nreturn true;\n}\n';
    expect(() => stableNames(code, new Map())).to.throw('validate7 validates no named definition');
  });

  it('compile each definition once, its export and the $refs to it calling the same function', function () {
    const code = compileValidators(definitions({ Id: ID, Note: NOTE, Tree: TREE }));
    expect(code.match(/^function validate_\w*/gm)).to.deep.equal(['function validate_Id', 'function validate_Note', 'function validate_Tree']);
    expect(code).to.not.match(/\b(?:validate|schema|pattern|func|formats|wrapper)\d+\b/);
    expect(code).to.include('const wrapper_Tree = {validate: validate_Tree};');
    expect(code).to.include('const formats_date_time = runtime("ajv-formats/dist/formats").fullFormats["date-time"];');
    const { Id, Note, Tree } = load(code);
    expect(Note!({ type: 'note', id: 'abc', at: '2025-01-02T03:04:05Z' })).to.equal(true);
    expect(Note!({ type: 'note', id: 'ABC' })).to.equal(false);
    expect(Note!.errors).to.deep.include({ instancePath: '/id', schemaPath: '#/pattern', keyword: 'pattern', params: { pattern: '^[a-z]+$' }, message: 'must match pattern "^[a-z]+$"' });
    expect(Id!('abcdefghi')).to.equal(false);
    expect(Tree!({ id: 'a', children: [{ id: 'b', children: [{ id: 'C' }] }] })).to.equal(false);
    expect(Tree!.errors![0]).to.include({ instancePath: '/children/0/children/0/id', keyword: 'pattern' });
  });

  it('change in a definition\'s own block only when a field is added to it', function () {
    const before = blocks(compileValidators(definitions({ Id: ID, Note: NOTE, Tree: TREE })));
    const withField = structuredClone(NOTE);
    withField.properties.priority = { type: 'integer', minimum: 0, maximum: 9 };
    const after = blocks(compileValidators(definitions({ Id: ID, Note: withField, Tree: TREE })));
    const changed = [...after.keys()].filter((head) => after.get(head) !== before.get(head));
    expect(changed).to.deep.equal(['exports.Note = validate_Note;']);
  });

  it('add one block for a new definition and leave the others as they were', function () {
    const before = blocks(compileValidators(definitions({ Id: ID, Note: NOTE, Tree: TREE })));
    const first: Schema = { title: 'Ack', type: 'object', required: ['id'], properties: { id: { $ref: '#/definitions/Id' } } };
    const after = blocks(compileValidators(definitions({ Ack: first, Id: ID, Note: NOTE, Tree: TREE })));
    const changed = [...after.keys()].filter((head) => after.get(head) !== before.get(head));
    expect(changed).to.deep.equal(['exports.Ack = validate_Ack;']);
    expect([...before.keys()].filter((head) => !after.has(head))).to.deep.equal([]);
  });
});
