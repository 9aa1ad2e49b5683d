import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Lexicon, TermPool } from '../../src/index/lexicon.ts';
import { TermTable } from '../../src/index/termTable.ts';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
/** Every term of `table`, in its order. */
const termsOf = (table: TermTable) => Array.from({ length: table.size }, (_, id) => table.term(id));

describe('lexicon', () => {
  it('gives each distinct term one id, the same however often and from whatever buffer it is interned', () => {
    const lexicon = new Lexicon();
    const words = ['café', 'cafe', 'caf', '', '中文', '😀', 'a'.repeat(70_000)];
    const ids = words.map((word) => lexicon.intern(utf8(word)));
    expect(ids).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // The same bytes inside another buffer, at an offset.
    const inside = utf8(`xx${words[0]}yy`);
    expect(lexicon.intern(inside, 2, inside.length - 2)).toBe(0);
    expect(words.map((word) => lexicon.intern(utf8(word)))).toEqual(ids);
    expect(ids.map((id) => lexicon.term(id))).toEqual(words);
    expect(lexicon.size).toBe(7);
    expect([...words, 'cafés', 'ca', 'a'].map((word) => lexicon.find(utf8(word)))).toEqual([
      ...ids,
      -1,
      -1,
      -1,
    ]);
  });

  it('keep every id as it grows past its first arena and hash table (200,000 terms)', () => {
    const lexicon = new Lexicon();
    const word = (n: number) => `w${n.toString(36)}`;
    const wrong = (each: (n: number) => boolean) =>
      Array.from({ length: 200_000 }, (_, n) => n).filter((n) => !each(n));
    expect(wrong((n) => lexicon.intern(utf8(word(n))) === n)).toEqual([]);
    expect(wrong((n) => lexicon.intern(utf8(word(n))) === n && lexicon.term(n) === word(n))).toEqual([]);
    expect(lexicon.size).toBe(200_000);
  });

  it('compare a key with a term as Buffer.compare does, and tell a prefix', () => {
    const lexicon = new Lexicon();
    const words = ['caf', 'café', 'cafe', 'b', 'zeta', '中', '😀'];
    const ids = words.map((word) => lexicon.intern(utf8(word)));
    for (const key of [...words, '', 'ca', 'cafés', 'zz', '\u00ff'])
      for (const [at, word] of words.entries()) {
        expect([key, word, Math.sign(lexicon.compare(utf8(key), ids[at]!))]).toEqual([
          key,
          word,
          Buffer.compare(utf8(key), utf8(word)),
        ]);
        expect([key, word, lexicon.startsWith(ids[at]!, utf8(key))]).toEqual([
          key,
          word,
          word.startsWith(key),
        ]);
      }
  });
});

describe('terms of names and descriptions', () => {
  it('are found by prefix in the order of their bytes, past their first 6 bytes too, up to a length', () => {
    const lexicon = new Lexicon();
    const words = ['abcdefgz', 'body', 'abcdefga', 'abcdefg', 'abcdefgé', 'abcdefgb', 'abc', 'abcdefgab'];
    const ids = words.map((word) => lexicon.intern(utf8(word)));
    for (const [at, id] of ids.entries()) if (words[at] !== 'abcdefgb') lexicon.markAbout(id);
    const found = (prefix: string, maxLength: number) =>
      lexicon.aboutWithPrefix(utf8(prefix), maxLength).map((id) => lexicon.term(id));
    expect(found('abcdefg', 99)).toEqual(['abcdefg', 'abcdefga', 'abcdefgab', 'abcdefgz', 'abcdefgé']);
    expect(found('abc', 8)).toEqual(['abc', 'abcdefg', 'abcdefga', 'abcdefgz', 'abcdefgé']);
    expect([found('abd', 99), found('b', 3)]).toEqual([[], []]);
    // One marked later is found at the next search.
    lexicon.markAbout(ids[5]!);
    expect(found('abcdefg', 8)).toEqual(['abcdefg', 'abcdefga', 'abcdefgb', 'abcdefgz', 'abcdefgé']);
    expect([lexicon.isAbout(ids[1]!), lexicon.isAbout(-1), lexicon.isAbout(1_000_000)]).toEqual([
      true,
      false,
      false,
    ]);
  });
});

describe('terms of names and descriptions, marked in turns', () => {
  it('are kept in the order of their bytes, each turn merged with those before', () => {
    const lexicon = new Lexicon();
    // Terms sharing their first 6 bytes or more, and not: 'prefix' + a number, and short words.
    const words = Array.from({ length: 2000 }, (_, i) =>
      i % 3 === 0 ? `prefix${(i * 7919) % 2000}` : `w${(i * 104729) % 5000}`,
    );
    const ids = words.map((word) => lexicon.intern(utf8(word)));
    for (let turn = 0; turn < 10; turn++) {
      for (let at = turn; at < ids.length; at += 10) lexicon.markAbout(ids[at]!);
      lexicon.settle();
    }
    const all = lexicon.aboutWithPrefix(utf8(''), 99).map((id) => lexicon.term(id));
    expect(all).toEqual([...new Set(words)].sort((a, b) => Buffer.compare(utf8(a), utf8(b))));
  });
});

describe('term pool', () => {
  it('interns each term once across tables, and moves the live tables to a new lexicon past its limit', () => {
    const pool = new TermPool(8);
    const first = TermTable.of(['gamma', 'alpha', 'beta'], pool).table;
    const second = TermTable.read(utf8('alpha\nbeta\ndelta'), pool)!.table;
    expect([pool.lexicon.size, pool.moves]).toEqual([4, 0]);
    first.markAbout(first.idOf('beta')!);
    const before = pool.lexicon;
    // 4 held and 6 more would pass 8: the live tables' 4 terms go to a new lexicon, then the 6.
    const third = TermTable.of(['one', 'two', 'three', 'four', 'five', 'six'], pool).table;
    expect([pool.moves, pool.lexicon === before, pool.lexicon.size]).toEqual([1, false, 10]);
    // Each table's terms in the order of their ids, the same in the new lexicon as in the old.
    expect([termsOf(first), termsOf(second), termsOf(third)]).toEqual([
      ['gamma', 'alpha', 'beta'],
      ['alpha', 'beta', 'delta'],
      ['one', 'two', 'three', 'four', 'five', 'six'],
    ]);
    expect([...first.lexiconIds, ...second.lexiconIds]).toEqual([0, 1, 2, 1, 2, 3]);
    // What a name or description says is said in the new lexicon too.
    const lexicon = pool.lexicon;
    expect(lexicon.aboutWithPrefix(utf8('b'), 9).map((id) => lexicon.term(id))).toEqual(['beta']);
    expect([first.isAbout(first.idOf('beta')!), second.isAbout(second.idOf('beta')!)]).toEqual([true, false]);
    expect(['alpha', 'beta', 'delta', 'gamma', 'zeta'].map((term) => second.idOf(term))).toEqual([
      0,
      1,
      2,
      undefined,
      undefined,
    ]);
    expect(first.joined().toString('utf8')).toBe('alpha\nbeta\ngamma');
  });

  it('leaves a table no longer held behind when it moves the live ones', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const pool = new TermPool(4);
    const kept = TermTable.of(['kept'], pool).table;
    (() => TermTable.of(['dropped', 'gone', 'lost'], pool))();
    expect(pool.lexicon.size).toBe(4);
    await nextTurn();
    gc();
    await nextTurn();
    // 4 held, 2 more pass 4: only `kept` is live, so the new lexicon holds its term and the 2.
    const next = TermTable.of(['new', 'newer'], pool).table;
    expect([pool.moves, pool.lexicon.size]).toEqual([1, 3]);
    expect([termsOf(kept), termsOf(next)]).toEqual([['kept'], ['new', 'newer']]);
  });
});
