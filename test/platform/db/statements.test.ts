// Automatic preparation of the statements a process repeats (src/platform/db/index.ts): a text
// gets a name on its fifth use, the same name ever after, and the number of names is bounded.
import { describe, expect, it } from 'vitest';
import { StatementNames } from '../../../src/platform/db/index.js';

describe('statement names', () => {
  it('names a text on its fifth use and keeps that name; other texts count on their own', () => {
    const s = new StatementNames();
    const uses = Array.from({ length: 4 }, () => s.nameOf('select $1'));
    expect(uses).toEqual([undefined, undefined, undefined, undefined]);
    expect(s.nameOf('select $2')).toBeUndefined();
    const name = s.nameOf('select $1');
    expect(name).toMatch(/^svc_\d+$/);
    expect(s.nameOf('select $1')).toBe(name);
    for (let i = 0; i < 4; i++) s.nameOf('select $2');
    const other = s.nameOf('select $2');
    expect(other).toBeDefined();
    expect(other).not.toBe(name);
  });

  it('names at most MAX_NAMED texts, so a connection holds a bounded number of statements', () => {
    const s = new StatementNames();
    const names = new Set<string>();
    for (let i = 0; i < StatementNames.MAX_NAMED + 50; i++) {
      let n: string | undefined;
      for (let j = 0; j < StatementNames.THRESHOLD; j++) n = s.nameOf(`select ${i}, $1`);
      if (n !== undefined) names.add(n);
    }
    expect(names.size).toBe(StatementNames.MAX_NAMED);
    expect(s.nameOf('select 0, $1')).toBeDefined();
    for (let j = 0; j < 10; j++) expect(s.nameOf('select -1, $1')).toBeUndefined();
  });
});
