import { describe, expect, it } from 'vitest';
import { TermTable } from '../../src/index/termTable.ts';

describe('term table', () => {
  // UTF-8 byte order: 'é' (c3 a9) after 'caf', '中' (e4 b8 ad) after 'z', '😀' (f0 9f 98 80) last.
  const terms = ['zeta', '中文', 'alpha', 'café', '😀', 'caf', 'a'];

  it('rank its terms by their UTF-8 bytes and find each one, and no other', () => {
    const { table, ids } = TermTable.of(terms);
    expect([...ids]).toEqual([4, 5, 1, 3, 6, 2, 0]);
    expect(Array.from({ length: table.size }, (_, id) => table.term(id))).toEqual([
      'a',
      'alpha',
      'caf',
      'café',
      'zeta',
      '中文',
      '😀',
    ]);
    expect(terms.map((term) => table.idOf(term))).toEqual([...ids]);
    expect(['', 'b', 'cafe', 'zet', 'zetas', '中', '\n'].map((term) => table.idOf(term))).toEqual(
      Array(7).fill(undefined),
    );
    expect(table.bytes.toString('utf8')).toBe('a\nalpha\ncaf\ncafé\nzeta\n中文\n😀');
    // Its own bytes: a lexicon id per term (the terms' bytes are the lexicon's).
    expect(table.byteLength).toBe(7 * 4);
  });

  it('read back the bytes it holds, and refuse terms out of order or twice', () => {
    const { table } = TermTable.of(terms);
    const again = TermTable.read(table.bytes)!;
    expect([again.size, again.bytes.equals(table.bytes), again.idOf('café')]).toEqual([7, true, 3]);
    expect(TermTable.read(Buffer.from(''))?.size).toBe(0);
    for (const bad of ['b\na', 'a\na', 'a\n', '\na', 'zeta\ncafé\ncafé'])
      expect([bad, TermTable.read(Buffer.from(bad))]).toEqual([bad, undefined]);
  });
});
