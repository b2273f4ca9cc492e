// Where a .cpuprofile (node --cpu-prof, e.g. SERVICE_CPU_PROF=/tmp/prof npm run bench) spent its
// time: self time per function and per package, the top entries.
//
//   npx tsx bench/profile-top.ts /tmp/prof/CPU.….cpuprofile [entries, default 25]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  console.error('usage: npx tsx bench/profile-top.ts <file.cpuprofile> [entries]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
p.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
});

const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([id]) => ['(idle)', '(program)', '(garbage collector)'].includes(byId.get(id)!.callFrame.functionName))
  .reduce((a, [, t]) => a + t, 0);

/** The package of a script URL (node_modules/<pkg>), else src/…, else the URL's kind. */
const pkgOf = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const s = /\/(src\/[^/]+\/[^/]+)/.exec(url);
  if (s) return s[1]!;
  return url.startsWith('node:') ? 'node (built-in)' : url === '' ? '(native / vm)' : url;
};

const fns = new Map<string, number>();
const pkgs = new Map<string, number>();
for (const [id, t] of self) {
  const f = byId.get(id)!.callFrame;
  const fn = `${f.functionName || '(anonymous)'}  ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/src\//, 'src/')}:${f.lineNumber + 1}`;
  fns.set(fn, (fns.get(fn) ?? 0) + t);
  const pkg = ['(idle)', '(program)', '(garbage collector)'].includes(f.functionName) ? f.functionName : pkgOf(f.url);
  pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + t);
}
const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
const pct = (us: number) => `${((us / Math.max(1, total - idle)) * 100).toFixed(1).padStart(5)} %`;
console.log(`${file}: ${ms(total)} ms sampled, ${ms(total - idle)} ms busy (percentages of busy time)`);
console.log('\nby package (self time)');
for (const [k, t] of [...pkgs].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)} ms ${pct(t)}  ${k}`);
console.log('\nby function (self time)');
for (const [k, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(t)} ms ${pct(t)}  ${k}`);
