// Where each error code the bridge may send an app about its event comes from, so that the app-error scenarios
// send, in each profile, only the codes that profile's rules know: the protocol profile the protocol's own, the
// bridge profile our decisions' too, and no profile an extension's (a client that did not opt into an extension
// never gets its codes). The error catalogue (spec/asyncapi.yaml x-error-catalogue, generated ERRORS) says who
// receives a code and its scope but not its origin, so the origin is read from the protocol document that comes
// with the suite (spec/protocol.md): a code of the table of errors sent to apps in part 1 (#app-errors) is the
// protocol's; a code that part 2 names only in the sections of an extension ("### … (an extension …)") is the
// extension's; any other is a decision. When the catalogue carries an origin per code, read it from there instead.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS, ERROR_CODES, type ErrorCode } from '../../generated/index.js';
import { CONFORMANCE_DIR } from '../scenario.js';

export type CodeOrigin = 'protocol' | 'decision' | 'extension';

/** spec/protocol.md beside the suite: `../spec` in the repository, `../../spec` in the package (dist/conformance). */
function protocolDocument(): string {
  const candidates = [join(CONFORMANCE_DIR, '..', 'spec'), join(CONFORMANCE_DIR, '..', '..', 'spec')];
  const dir = candidates.find((d) => existsSync(join(d, 'protocol.md')));
  if (!dir) throw new Error(`spec/protocol.md not found beside the suite (looked in ${candidates.join(', ')})`);
  return readFileSync(join(dir, 'protocol.md'), 'utf8');
}

const codesIn = (text: string) => new Set(ERROR_CODES.filter((code) => new RegExp(`\\b${code}\\b`).test(text)));

/** The origin of every code of the catalogue, read once from spec/protocol.md. */
export function codeOrigins(text = protocolDocument()): Map<ErrorCode, CodeOrigin> {
  const part2At = text.search(/^# Part 2\b/m);
  const appErrorsAt = text.indexOf('<a id="app-errors"></a>');
  if (part2At < 0 || appErrorsAt < 0 || appErrorsAt > part2At)
    throw new Error('spec/protocol.md: no "# Part 2" heading, or no #app-errors table in part 1');
  // The table: its rows start with "| CODE |", up to the first line that is not a row.
  const table = text.slice(appErrorsAt).split('\n\n')[1] ?? '';
  const protocol = new Set([...table.matchAll(/^\| ([A-Z_]+) \|/gm)].map((m) => m[1]));
  const sections = text.slice(part2At).split(/^(?=### )/m);
  const extension = codesIn(sections.filter((s) => /^### .*\bextension\b/.test(s)).join('\n'));
  const decisions = codesIn(sections.filter((s) => !/^### .*\bextension\b/.test(s)).join('\n'));
  return new Map(
    ERROR_CODES.map((code) => [
      code,
      protocol.has(code) ? 'protocol' : extension.has(code) && !decisions.has(code) ? 'extension' : 'decision',
    ]),
  );
}

/** The codes the catalogue lets the bridge send an app about one of its events. */
export const APP_EVENT_ERRORS = ERROR_CODES.filter(
  (code) => ERRORS[code].receivers.includes('app') && ERRORS[code].scope === 'event',
);
