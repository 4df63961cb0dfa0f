// Nothing restates the spec (issue 16): a limit, a close code, a list of error codes, a WebSocket path or the
// client kinds written by hand drifts the day the spec changes. Code imports them from generated/ instead. Read
// with the TypeScript parser, so only literals count (comments and identifiers do not).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import {
  CLOSE_CODES,
  ENDPOINT_PATHS,
  ERROR_CODES,
  FIELD_BOUNDS,
  LIMITS,
  QUERY_PARAMETERS,
} from '../../generated/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Where hand-written code lives. Tests state expected numbers on purpose; their helpers do not. */
const SCANNED = ['src', 'conformance', 'bench', 'examples', 'tools', 'bin', 'test/helpers', 'test/conformance'];
/** Not scanned, with why. */
const SKIPPED: Record<string, string> = {
  'test/conformance/other-bridge':
    'a second, independent bridge that tests the conformance suite fairly: it must not share our generated code',
  'test/conformance/broken-clients':
    'independent clients written from the spec with nothing but ws, to test the client role fairly',
};
/** Test files under a scanned folder state expectations on purpose (only their helpers are scanned). */
const isTestFile = (path: string) => /\.test\.ts$/.test(path);

/**
 * Limit values distinctive enough that a literal equal to one is a restatement: at least 100 and not round.
 * Round numbers (1, 2 or 5 times a power of ten, a minute, an hour: 1000, 5000, 10000, 20000, 60000, 3600000) and
 * 4096 (a page or buffer size) are everyday timeouts, counts, sizes and unit conversions, and so is 64 (idMaxChars),
 * so equal values would be mostly coincidences; those limits are guarded where they are used by name instead.
 */
const isRound = (n: number) => /^[125]0*$/.test(String(n)) || n === 60_000 || n === 3_600_000 || n === 4096;
const LIMIT_VALUES = new Map<number, string>();
for (const [name, value] of Object.entries(LIMITS)) {
  if (value >= 100 && !isRound(value))
    LIMIT_VALUES.set(value, [LIMIT_VALUES.get(value), `LIMITS.${name}`].filter(Boolean).join(' or '));
}
for (const [name, value] of Object.entries(CLOSE_CODES))
  if (value >= 4000 && value <= 4999) LIMIT_VALUES.set(value, `CLOSE_CODES.${name}`);
const CODES = new Set<string>(ERROR_CODES);
/** Every value the spec states as a limit or a default: a text saying `default N` of one restates it. */
const DEFAULTS = new Set<number>(
  [
    ...Object.values(LIMITS),
    ...[QUERY_PARAMETERS, FIELD_BOUNDS].flatMap((byName) =>
      Object.values(byName).flatMap((fields) => Object.values<{ default?: unknown }>(fields).map((f) => f.default)),
    ),
  ].filter((v): v is number => typeof v === 'number'),
);
const KINDS = Object.keys(ENDPOINT_PATHS).sort().join('|');
/** The folder of the WebSocket paths (`/v1/ws/`): a string holding it spells a path by hand. */
const WS_DIR = Object.values(ENDPOINT_PATHS)[0]!.replace(/[^/]*$/, '');

/** Findings that are not restatements: a file (or folder) and what is found there, with why. Keep it short. */
const ALLOWED: { file: string; finding: string; reason: string }[] = [
  {
    file: 'src/store/migrations.ts',
    finding: '255',
    reason: 'a migration records the table as it was created; it must not change when the spec does',
  },
  {
    file: 'conformance/client/run.ts',
    finding: '30000',
    reason: 'how long a client under test may take to start, not the heartbeat',
  },
  {
    file: 'bench/relay.ts',
    finding: '4409',
    reason: "the bare baseline relay's own close code (its protocol, not the bridge's)",
  },
  { file: 'bench/', finding: '30000', reason: 'how long a benchmark waits for the bridge to drain, not the heartbeat' },
  {
    file: 'src/server/readiness.ts',
    finding: '30000',
    reason: "how long the event log's commits may fail before /readyz says so (O15), not the heartbeat",
  },
  {
    file: 'src/dashboard/assets/chart.js',
    finding: '240',
    reason: "a chart's width in pixels, not what a resume buffer costs",
  },
];
const allowed = (file: string, finding: string) =>
  ALLOWED.some((a) => file.startsWith(a.file) && finding.includes(a.finding));

/** Each restatement in `code` (as `line: what — use instead`). */
export function restatements(code: string, fileName = 'probe.ts'): string[] {
  const source = ts.createSourceFile(
    fileName,
    code,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS,
  );
  const found: string[] = [];
  const at = (node: ts.Node, what: string) =>
    found.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const stringsOf = (nodes: readonly ts.Node[]): string[] | undefined => {
    const texts = nodes
      .map((n) => (ts.isLiteralTypeNode(n) ? n.literal : n))
      .map((n) => (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) ? n.text : undefined));
    return texts.every((t): t is string => t !== undefined) ? texts : undefined;
  };
  const checkList = (node: ts.Node, members: readonly ts.Node[]) => {
    const texts = stringsOf(members);
    if (!texts || texts.length < 2) return;
    // A selection typed against the catalogue (`Extract<ErrorCode, 'A' | 'B'>`) names codes for a purpose; a
    // list of codes anywhere else, or of every code, restates the catalogue.
    const selection =
      ts.isUnionTypeNode(node) &&
      ts.isTypeReferenceNode(node.parent) &&
      node.parent.typeName.getText(source) === 'Extract';
    if (texts.every((t) => CODES.has(t)) && (!selection || texts.length >= CODES.size))
      at(node, `error codes ${texts.join(', ')} listed by hand — use ERROR_CODES/ERRORS or the ErrorCode type`);
    else if ([...new Set(texts)].sort().join('|') === KINDS)
      at(node, `the client kinds listed by hand — use ClientKind or Object.keys(ENDPOINT_PATHS)`);
  };
  /** A number, or a product/sum of numbers (`5 * 60 * 1000`), as written. */
  const numeric = (node: ts.Node): number | undefined => {
    if (ts.isNumericLiteral(node)) return Number(node.text.replace(/_/g, ''));
    if (ts.isParenthesizedExpression(node)) return numeric(node.expression);
    if (ts.isBinaryExpression(node)) {
      const [l, r] = [numeric(node.left), numeric(node.right)];
      if (l === undefined || r === undefined) return undefined;
      switch (node.operatorToken.kind) {
        case ts.SyntaxKind.AsteriskToken:
          return l * r;
        case ts.SyntaxKind.PlusToken:
          return l + r;
        case ts.SyntaxKind.MinusToken:
          return l - r;
        default:
          return undefined;
      }
    }
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    const value = numeric(node);
    if (value !== undefined) {
      const parent = node.parent;
      const inLarger =
        parent &&
        (ts.isBinaryExpression(parent) || ts.isParenthesizedExpression(parent)) &&
        numeric(parent) !== undefined;
      if (!inLarger && LIMIT_VALUES.has(value)) at(node, `${value} — use ${LIMIT_VALUES.get(value)}`);
      if (!inLarger) return; // its parts are judged as the whole
    }
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      if (node.text.includes(WS_DIR)) at(node, `a WebSocket path written by hand — use ENDPOINT_PATHS`);
      for (const [, n] of node.text.matchAll(/\bdefault:? (\d[\d_]*)\b/g)) {
        if (DEFAULTS.has(Number(n!.replace(/_/g, ''))))
          at(node, `a default (${n}) written in a text — interpolate it from generated/`);
      }
    }
    if (ts.isArrayLiteralExpression(node)) checkList(node, node.elements);
    if (ts.isUnionTypeNode(node)) checkList(node, node.types);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((path) => !path.split('/').includes('node_modules') && !isTestFile(path))
    .filter((path) => !Object.keys(SKIPPED).some((skip) => path.startsWith(`${skip}/`)));
}

/**
 * The hand-written Python package (python/agent_bridge; its _generated/ is written from the spec) is held to the
 * same rules, read with Python's own parser (`ast`, through the python3 on PATH): the literals of each source, its
 * docstrings (string statements) left out, as `[line, kind, value]`.
 */
const PYTHON_LITERALS = String.raw`
import ast, json, operator, sys
OPS = {ast.Mult: operator.mul, ast.Add: operator.add, ast.Sub: operator.sub}
def number(node):
    if isinstance(node, ast.Constant) and type(node.value) is int: return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        l, r = number(node.left), number(node.right)
        if l is not None and r is not None: return OPS[type(node.op)](l, r)
    return None
def literals(code):
    tree, found, skip = ast.parse(code), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant): skip.add(id(node.value))
        if id(node) in skip: continue
        value = number(node)
        if value is not None:
            found.append([node.lineno, "number", value]); skip.update(id(n) for n in ast.walk(node)); continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str): found.append([node.lineno, "text", node.value])
        items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            skip.add(id(node.slice))
        if items and all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            found.append([node.lineno, "list", [i.value for i in items]])
    return sorted(found, key=lambda f: f[0])
print(json.dumps([literals(code) for code in json.load(sys.stdin)]))
`;

/** Each restatement in each Python source (as `line: what — use instead`). */
export function pythonRestatements(codes: string[]): string[][] {
  const facts = JSON.parse(
    execFileSync('python3', ['-c', PYTHON_LITERALS], { input: JSON.stringify(codes), encoding: 'utf8' }),
  ) as [number, 'number' | 'text' | 'list', any][][];
  return facts.map((literals) =>
    literals.flatMap(([line, kind, value]) => {
      if (kind === 'number')
        return LIMIT_VALUES.has(value) ? [`${line}: ${value} — use ${LIMIT_VALUES.get(value)} of _generated`] : [];
      if (kind === 'text') {
        const found = value.includes(WS_DIR) ? [`${line}: a WebSocket path written by hand — use ENDPOINT_PATHS`] : [];
        for (const [, n] of String(value).matchAll(/\bdefault:? (\d[\d_]*)\b/g))
          if (DEFAULTS.has(Number(n!.replace(/_/g, ''))))
            found.push(`${line}: a default (${n}) written in a text — interpolate it from _generated`);
        return found;
      }
      const texts = value as string[];
      if (texts.length < 2) return [];
      if (texts.every((t) => CODES.has(t)))
        return [`${line}: error codes ${texts.join(', ')} listed by hand — use ERROR_CODES/ERRORS or ErrorCode`];
      if ([...new Set(texts)].sort().join('|') === KINDS)
        return [`${line}: the client kinds listed by hand — use ClientKind or ENDPOINT_PATHS`];
      return [];
    }),
  );
}

/** The hand-written modules of the Python package. */
function pythonSources(): string[] {
  const dir = join(ROOT, 'python/agent_bridge');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.py'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'))
    .filter((path) => !path.startsWith('python/agent_bridge/_generated/'));
}

describe('nothing restates the spec', function () {
  it('finds each kind of restatement in a sample (the detector is not blind)', function () {
    const sample = [
      'const idle = 90000; // HEARTBEAT_TIMEOUT after three periods', // 1: a limit
      'ws.close(4401, "no");', // 2: a close code
      'const timeout = 5 * 60 * 1000;', // 3: a limit as a product (agentTimeoutMs)
      "const FINAL = new Set(['UNAUTHORIZED', 'FORBIDDEN']);", // 4: a list of codes
      "type Final = 'UNAUTHORIZED' | 'TOKEN_REVOKED';", // 5: a union of codes
      'const url = `${base}/v1/ws/app`;', // 6: a path
      "type Role = 'app' | 'agent';", // 7: the client kinds
      "program.option('--ttl-days <days>', 'session TTL in days (default 14)');", // 8: a default in a text
      '// 4401 and 30000 in a comment, and /v1/ws/agent, are not code', // 9
      'const ok = [404, 1000, 64 * 2, 500 + 1, 2 ** 20]; const one = ["UNAUTHORIZED"]; const mixed = ["FORBIDDEN", "other"];', // 10
      "type Refusal = Extract<ErrorCode, 'UNAUTHORIZED' | 'FORBIDDEN'>; const t = 'retry (default 3)';", // 11: a typed selection
    ].join('\n');
    expect(restatements(sample).map((f) => f.split(':')[0])).to.deep.equal(['1', '2', '3', '4', '5', '6', '7', '8']);
  });

  it('src, conformance, bench, examples, tools and the test helpers import limits, codes and paths from generated/', function () {
    const unexplained = SCANNED.flatMap(sourceFiles).flatMap((file) =>
      restatements(readFileSync(join(ROOT, file), 'utf8'), file)
        .filter((f) => !allowed(file, f))
        .map((f) => `${file}:${f}`),
    );
    expect(
      unexplained,
      'write these from generated/ (LIMITS, CLOSE_CODES, ERROR_CODES, ENDPOINT_PATHS, ClientKind)',
    ).to.deep.equal([]);
  });

  it('every allowlist entry still matches something (a stale one would hide a new restatement)', function () {
    const found = SCANNED.flatMap(sourceFiles).flatMap((file) =>
      restatements(readFileSync(join(ROOT, file), 'utf8'), file).map((f) => ({ file, f })),
    );
    const stale = ALLOWED.filter((a) => !found.some(({ file, f }) => file.startsWith(a.file) && f.includes(a.finding)));
    expect(stale).to.deep.equal([]);
  });

  it('finds each kind of restatement in a Python sample', function () {
    const sample = [
      '"""A docstring may say 4401, /v1/ws/app and (default 14)."""', // 1: not code
      'IDLE = 90000  # a limit; 4401 in a comment is not code', // 2: a limit
      'ws_close = 4401', // 3: a close code
      'TIMEOUT = 5 * 60 * 1000', // 4: a product
      'FINAL = ("UNAUTHORIZED", "FORBIDDEN")', // 5: a list of codes
      'Final = Literal["UNAUTHORIZED", "TOKEN_REVOKED"]', // 6: a union of codes
      'url = f"{base}/v1/ws/app"', // 7: a path
      'KINDS = ["agent", "app"]', // 8: the client kinds
      'HELP = "session TTL in days (default 14)"', // 9: a default in a text
      'ok = [404, 1000, 64 * 2, 500 + 1, 2 ** 20]; one = ["UNAUTHORIZED"]; mixed = ["FORBIDDEN", "other"]', // 10
    ].join('\n');
    expect(pythonRestatements([sample])[0]!.map((f) => f.split(':')[0])).to.deep.equal([
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
    ]);
  });

  it('the hand-written Python package (python/agent_bridge, not _generated) imports them from _generated', function () {
    const files = pythonSources();
    const found = pythonRestatements(files.map((f) => readFileSync(join(ROOT, f), 'utf8')));
    const unexplained = files.flatMap((file, i) => found[i]!.map((f) => `${file}:${f}`));
    expect(unexplained, 'write these from agent_bridge._generated (limits, errors, messages)').to.deep.equal([]);
  });
});
