// The longest functions of a folder, read with the TypeScript parser: every function, method, accessor, constructor
// and arrow function with its lines, longest first. `--max N` exits 1 when one is over N lines (a guard).
//   npx tsx tools/function-sizes.ts src/core src/server.ts [--top 15] [--max 60]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

export interface FunctionSize {
  file: string;
  name: string;
  lines: number;
  line: number;
}

function filesUnder(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  return '(anonymous)';
}

export function functionSizes(dir: string): FunctionSize[] {
  const sizes: FunctionSize[] = [];
  for (const file of filesUnder(dir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        sizes.push({ file, name: nameOf(node, source), lines: last - first + 1, line: first + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sizes.sort((a, b) => b.lines - a.lines);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const at = args.indexOf(name);
    return at < 0 ? undefined : Number(args.splice(at, 2)[1]);
  };
  const top = option('--top') ?? 15;
  const max = option('--max');
  const sizes = args.flatMap((dir) => functionSizes(dir));
  sizes.sort((a, b) => b.lines - a.lines);
  for (const s of sizes.slice(0, top)) console.log(`${String(s.lines).padStart(4)}  ${s.file}:${s.line}  ${s.name}`);
  const over = max === undefined ? [] : sizes.filter((s) => s.lines > max);
  if (over.length) {
    console.error(`${over.length} function(s) over ${max} lines`);
    process.exitCode = 1;
  }
}
