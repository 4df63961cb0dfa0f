// The module-level statements of Ajv's standalone code, as tokens, for the pass that renames them (stable-names.ts).
// A tokenizer for the JavaScript Ajv emits, not for any JavaScript: Ajv writes strings with JSON.stringify and no
// template literals; its few regular expression literals (`key0.replace(/~/g, "~0")`) follow a bracket, a comma
// or an operator, where a `/` cannot be a division.

export interface Token {
  kind: 'name' | 'string' | 'regexp' | 'number' | 'space' | 'comment' | 'punct';
  text: string;
}

export interface Statement {
  /** The statement's tokens, from its first significant token to its closing `;` or `}`. */
  tokens: Token[];
  /** The module-level name it declares (`function X`, `const X`), if any. */
  declares?: string;
  kind: 'function' | 'const' | 'export' | 'other';
}

const TOKEN = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_$][\w$]*|\d[\w.]*|[^]/gy;
const REGEXP = /\/(?:[^/\\\n[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+\/[a-z]*/y;

/** After these a `/` starts a regular expression; after a name, a number or a closing bracket it divides. */
const BEFORE_REGEXP = /^(?:[-(,=:[!&|?{};+*%<>~^]|return|typeof)$/;

export function tokenize(code: string): Token[] {
  const tokens: Token[] = [];
  let previous = '';
  for (let at = 0; at < code.length;) {
    REGEXP.lastIndex = at;
    const regexp =
      code[at] === '/' && !/^\/[/*]/.test(code.slice(at, at + 2)) && BEFORE_REGEXP.test(previous)
        ? REGEXP.exec(code)
        : null;
    TOKEN.lastIndex = at;
    const text = regexp ? regexp[0] : TOKEN.exec(code)![0];
    if (text === '`')
      throw new Error('the Ajv standalone code has a template literal: tools/gen/statements.ts cannot read it');
    const kind = regexp
      ? 'regexp'
      : /^\s/.test(text)
        ? 'space'
        : /^\/[/*]/.test(text)
          ? 'comment'
          : /^["']/.test(text)
            ? 'string'
            : /^[A-Za-z_$]/.test(text)
              ? 'name'
              : /^\d/.test(text)
                ? 'number'
                : 'punct';
    tokens.push({ kind, text });
    if (kind !== 'space' && kind !== 'comment') previous = text;
    at += text.length;
  }
  return tokens;
}

const OPEN = new Set(['{', '(', '[']);
const CLOSE = new Set(['}', ')', ']']);

/** Splits `code` into its top-level statements; the whitespace between them is dropped. */
export function statements(code: string): Statement[] {
  const found: Statement[] = [];
  let current: Token[] = [];
  let depth = 0;
  const end = (): void => {
    found.push(describe(current));
    current = [];
  };
  for (const token of tokenize(code)) {
    if (current.length === 0 && (token.kind === 'space' || token.kind === 'comment')) continue;
    current.push(token);
    if (token.kind !== 'punct') continue;
    if (OPEN.has(token.text)) depth++;
    else if (CLOSE.has(token.text) && --depth < 0) throw new Error('the Ajv standalone code has an unbalanced bracket');
    else if (depth === 0 && token.text === ';') end();
    if (depth === 0 && token.text === '}' && current[0]!.text === 'function') end();
  }
  if (current.length > 0)
    throw new Error(`the Ajv standalone code ends inside a statement: ${text(current).slice(0, 80)}`);
  return found;
}

export function text(tokens: Token[]): string {
  return tokens.map((t) => t.text).join('');
}

/** The significant tokens: no whitespace, no comments. */
export function significant(tokens: Token[]): Token[] {
  return tokens.filter((t) => t.kind !== 'space' && t.kind !== 'comment');
}

function describe(tokens: Token[]): Statement {
  const [first, second] = significant(tokens).map((t) => t.text);
  if (first === 'function') return { tokens, declares: second, kind: 'function' };
  if (first === 'const' || first === 'let' || first === 'var') return { tokens, declares: second, kind: 'const' };
  if (first === 'exports' && second === '.') return { tokens, kind: 'export' };
  return { tokens, kind: 'other' };
}
