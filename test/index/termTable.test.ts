import { describe, expect, it } from 'vitest';
import { TermPool } from '../../src/index/lexicon.ts';
import { TermTable } from '../../src/index/termTable.ts';

describe('term table', () => {
  // UTF-8 byte order: 'é' (c3 a9) after 'caf', '中' (e4 b8 ad) after 'z', '😀' (f0 9f 98 80) last.
  const terms = ['zeta', '中文', 'alpha', 'café', '😀', 'caf', 'a'];

  it('number its terms in the order of their lexicon ids, find each one and no other, and write them in byte order', () => {
    const pool = new TermPool();
    // Interned before: 'caf' and 'alpha' have the lexicon's first ids.
    TermTable.of(['caf', 'alpha'], pool);
    const { table, ids } = TermTable.of(terms, pool);
    // Lexicon ids: caf 0, alpha 1, then zeta 2, 中文 3, café 4, 😀 5, a 6.
    expect([...table.lexiconIds]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect([...ids]).toEqual([2, 3, 1, 4, 5, 0, 6]);
    expect(Array.from({ length: table.size }, (_, id) => table.term(id))).toEqual([
      'caf',
      'alpha',
      'zeta',
      '中文',
      'café',
      '😀',
      'a',
    ]);
    expect(terms.map((term) => table.idOf(term))).toEqual([...ids]);
    expect(['', 'b', 'cafe', 'zet', 'zetas', '中', '\n'].map((term) => table.idOf(term))).toEqual(
      Array(7).fill(undefined),
    );
    expect([...table.byBytes()].map((id) => table.term(id))).toEqual([
      'a',
      'alpha',
      'caf',
      'café',
      'zeta',
      '中文',
      '😀',
    ]);
    expect(table.joined().toString('utf8')).toBe('a\nalpha\ncaf\ncafé\nzeta\n中文\n😀');
    // Its own bytes: a lexicon id per term, each a 4-bit gap from the one before (4 bytes), their block's base and
    // start (8), and a bit each (the terms' bytes are the lexicon's).
    expect(table.byteLength).toBe(4 + 8 + 1);
  });

  it('ends a block of lexicon ids where one is 16 or more past the one before, and finds them alike', () => {
    const pool = new TermPool();
    const many = Array.from({ length: 70_000 }, (_, k) => `t${k}`);
    TermTable.of(many, pool);
    const { table } = TermTable.of(['t0', 't69999', 't3'], pool);
    expect([...table.lexiconIds]).toEqual([0, 3, 69_999]);
    expect(['t0', 't3', 't69999', 't4', 'nope'].map((term) => table.idOf(term))).toEqual([
      0,
      1,
      2,
      undefined,
      undefined,
    ]);
    // 0 and 3 in a block, 69,999 in another: 4 bits an id (2 bytes), 8 a block (its base and where it starts), a
    // bit an id.
    expect(table.byteLength).toBe(2 + 2 * 8 + 1);
  });

  it('read back the bytes it writes, saying where each term was, and refuse terms out of order or twice', () => {
    const pool = new TermPool();
    const { table } = TermTable.of(terms, pool);
    const again = TermTable.read(table.joined(), pool)!;
    expect([again.table.size, again.table.joined().equals(table.joined()), again.table.idOf('café')]).toEqual(
      [7, true, table.idOf('café')],
    );
    // Term `id` of the table read was at `order[id]` among the bytes' terms ('a\nalpha\ncaf\ncafé\nzeta\n中文\n😀').
    expect([...again.order].map((at) => table.joined().toString('utf8').split('\n')[at])).toEqual(
      Array.from({ length: 7 }, (_, id) => again.table.term(id)),
    );
    expect(TermTable.read(Buffer.from(''), pool)?.table.size).toBe(0);
    const before = pool.lexicon.size;
    for (const bad of ['b\na', 'a\na', 'a\n', '\na', 'zeta\ncafé\ncafé', 'new\nnew'])
      expect([bad, TermTable.read(Buffer.from(bad), pool)]).toEqual([bad, undefined]);
    // Nothing of a refused file is interned.
    expect(pool.lexicon.size).toBe(before);
  });
});
