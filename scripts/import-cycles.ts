// npm run check:cycles [dir…]: import cycles among the TypeScript files under each `dir` (default
// src and web/src, the server and the agent app), type-only imports counted: `import type`,
// `export type … from`, `import('…')` types and dynamic imports are edges like any other, because a
// ring of types still ties the files' meaning together. Each directory is its own program, and its
// specifiers are resolved by the TypeScript compiler itself with the options of the tsconfig.json
// nearest above it (src: the root's, NodeNext: './x.js' is ./x.ts; web/src: web/tsconfig.json,
// Bundler: './x' is ./x.ts or ./x.tsx, a folder's index). Each cycle is printed as the files of one
// strongly connected component and one loop through them; exit status 1 when there is any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = process.cwd();
const given = process.argv.slice(2);
const dirs = (given.length > 0 ? given : ['src', 'web/src']).map((d) => resolve(root, d));

/** The compiler's options and resolver for the files under `dir`: its nearest tsconfig.json. */
function resolverFor(dir: string) {
  const configPath = ts.findConfigFile(dir, ts.sys.fileExists, 'tsconfig.json');
  if (!configPath) throw new Error(`no tsconfig.json above ${dir}`);
  const base = dirname(configPath);
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, base);
  const options = config.options;
  const host = ts.createCompilerHost(options);
  const cache = ts.createModuleResolutionCache(base, (f) => host.getCanonicalFileName(f), options);
  return { configPath, options, host, cache };
}

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules') walk(p, out);
    } else if (/\.(ts|tsx|mts|cts)$/.test(name) && !/\.d\.[mc]?ts$/.test(name)) {
      out.push(p);
    }
  }
  return out;
}

/** Every module specifier a file names: imports and re-exports (type-only too), import(), require(). */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const e = node.moduleReference.expression;
      if (ts.isStringLiteral(e)) out.push(e.text);
    } else if (ts.isImportTypeNode(node)) {
      const a = node.argument;
      if (ts.isLiteralTypeNode(a) && ts.isStringLiteral(a.literal)) out.push(a.literal.text);
    } else if (ts.isCallExpression(node)) {
      const [arg] = node.arguments;
      const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const required = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if ((dynamic || required) && arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const files: string[] = [];
const edges = new Map<string, string[]>();
for (const dir of dirs) {
  const { configPath, options, host, cache } = resolverFor(dir);
  const mine = walk(dir, []).sort();
  const known = new Set(mine);
  let count = 0;
  for (const file of mine) {
    const to = new Set<string>();
    // ESM or CommonJS, as the compiler decides it for this file (package.json "type", extension).
    const format = ts.getImpliedNodeFormatForFile(file, cache.getPackageJsonInfoCache(), host, options);
    for (const spec of specifiers(file)) {
      const r = ts.resolveModuleName(spec, file, options, host, cache, undefined, format).resolvedModule;
      if (!r || r.isExternalLibraryImport) continue;
      const target = resolve(r.resolvedFileName);
      if (known.has(target)) to.add(target);
    }
    count += to.size;
    edges.set(file, [...to].sort());
  }
  files.push(...mine);
  // A resolver that finds no imports at all would report 0 cycles for the wrong reason.
  if (mine.length > 1 && count === 0) {
    console.log(
      `${relative(root, dir)}: no import between its ${mine.length} files resolved with ${relative(root, configPath)}`,
    );
    process.exit(1);
  }
  console.log(`${relative(root, dir)}: ${mine.length} files, ${count} imports (${relative(root, configPath)})`);
}

// Tarjan's strongly connected components (iterative: deep import chains must not overflow).
const index = new Map<string, number>();
const low = new Map<string, number>();
const onStack = new Set<string>();
const stack: string[] = [];
const components: string[][] = [];
let next = 0;
for (const start of files) {
  if (index.has(start)) continue;
  const work: Array<{ v: string; i: number }> = [{ v: start, i: 0 }];
  index.set(start, next);
  low.set(start, next++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const frame = work[work.length - 1]!;
    const out = edges.get(frame.v)!;
    if (frame.i < out.length) {
      const w = out[frame.i++]!;
      if (!index.has(w)) {
        index.set(w, next);
        low.set(w, next++);
        stack.push(w);
        onStack.add(w);
        work.push({ v: w, i: 0 });
      } else if (onStack.has(w)) {
        low.set(frame.v, Math.min(low.get(frame.v)!, index.get(w)!));
      }
      continue;
    }
    work.pop();
    const parent = work[work.length - 1];
    if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(frame.v)!));
    if (low.get(frame.v) === index.get(frame.v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== frame.v);
      if (c.length > 1 || edges.get(frame.v)!.includes(frame.v)) components.push(c.sort());
    }
  }
}

/** One loop through a component: the shortest way from its first file back to it. */
function loop(component: string[]): string[] {
  const inside = new Set(component);
  const first = component[0]!;
  const from = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v)!) {
      if (!inside.has(w)) continue;
      if (w === first) {
        const path = [first];
        for (let x = v; x !== first; x = from.get(x)!) path.splice(1, 0, x);
        return [...path, first];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [first];
}

const name = (f: string) => relative(root, f);
components.sort((a, b) => b.length - a.length);
for (const c of components) {
  console.log(`cycle of ${c.length} files: ${c.map(name).join(', ')}`);
  console.log(`  e.g. ${loop(c).map(name).join(' → ')}`);
}
console.log(`${components.length} import cycles among ${files.length} files (type-only imports counted)`);
process.exit(components.length > 0 ? 1 : 0);
