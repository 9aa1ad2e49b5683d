import { Ascending } from '../../src/index/ascending.ts';
import { TermPool } from '../../src/index/lexicon.ts';
import { describe, expect, it } from 'vitest';
import { QUERIES, realisticCatalog } from '../../bench/searchCatalog.ts';
import {
  BM25F,
  MAX_INDEX_POSTINGS,
  MAX_INDEX_TERMS,
  MAX_SKILL_TERMS,
  MIN_SKILL_TERMS,
  PLACE,
  type Postings,
  PostingsBuilder,
  type RankedTerm,
} from '../../src/index/postings.ts';
import { queryTerms } from '../../src/mcp/search.ts';
import { skillTerms } from '../../src/index/terms.ts';

interface Ranked {
  id: number;
  score: number;
}
const ranked = (id: number, score: number): Ranked => ({ id, score });

/**
 * The referee: BM25F written out plainly over Maps (a term's frequency is the weighted sum of its places, the body's
 * normalised by length; one saturation; a term of the name adds nameBonus past it, of the description descriptionBonus), every skill looked at for every
 * term. The typed-array postings must rank exactly as it does. (Until issue 37 the referee was MiniSearch over one
 * field; the scoring changed on purpose: fields weighted and saturated apart, no multiplying by the terms matched.)
 */
function refereeOf(skills: ReadonlyArray<ReadonlyMap<string, number>>) {
  const averageLength = skills.reduce((sum, skill) => sum + skill.size, 0) / skills.length;
  const { k, b } = BM25F;
  const weight = (places: number, place: number, w: number) => (places & place ? w : 0);
  return (terms: readonly RankedTerm[]): Ranked[] => {
    const scores = new Map<number, number>();
    for (const { term, idf, about: onlyAbout } of terms)
      for (const [id, skill] of skills.entries()) {
        const places = skill.get(term) ?? 0;
        if (places === 0 || (onlyAbout === true && (places & (PLACE.name | PLACE.description)) === 0))
          continue;
        const about =
          weight(places, PLACE.name, BM25F.name) + weight(places, PLACE.description, BM25F.description);
        const body = weight(places, PLACE.heading, BM25F.heading) + weight(places, PLACE.text, BM25F.text);
        const tf = body === 0 ? about : about + body / (1 - b + (b * skill.size) / averageLength);
        const bonus =
          weight(places, PLACE.name, BM25F.nameBonus) +
          weight(places, PLACE.description, BM25F.descriptionBonus);
        const score = idf * ((tf * (k + 1)) / (tf + k) + bonus);
        scores.set(id, (scores.get(id) ?? 0) + score);
      }
    return [...scores].map(([id, score]) => ({ id, score })).sort((x, y) => y.score - x.score || x.id - y.id);
  };
}

/** Terms of a skill's text (each once, in order). */
const text = (...words: string[]) => new Map(words.map((word) => [word, PLACE.text]));

function postingsOf(skills: ReadonlyArray<ReadonlyMap<string, number>>, pool?: TermPool) {
  const builder = new PostingsBuilder(pool);
  for (const [id, terms] of skills.entries()) builder.add(id, terms);
  return builder.done();
}

/** `terms` with their idf over `postings` (as ranking.ts weighs them over one index; `about`: each counted only in a
 * name or description), ranked. */
function rank(postings: Postings, terms: readonly string[], about = false): Ranked[] {
  const skills = postings.skillCount;
  const weighed = terms.map((term) => {
    const held = postings.held(term);
    return { term, about, idf: Math.log(1 + (skills - held + 0.5) / (held + 0.5)) };
  });
  return postings.rank(weighed, postings.totalLength / skills, ranked);
}

describe('postings', () => {
  // bench/search.ts's realistic catalog, indexed as a namespace indexes it, and its paraphrased queries.
  const catalog = realisticCatalog();
  const skills = catalog.map((skill) => skillTerms(skill.name, skill.description, skill.body));

  it('rank every query of bench/search.ts as the referee does: the same skills, order and scores, to the last bit', () => {
    const postings = postingsOf(skills);
    const referee = refereeOf(skills);
    const queries = [
      ...QUERIES.map(({ query }) => queryTerms(query)),
      // Each term alone, a term in no skill beside one in many, and nothing.
      ...Array.from({ length: 200 }, (_, id) => [postings.terms.term(id * 7)]),
      ['nosuchtermanywhere', 'step'],
      [],
    ];
    let compared = 0;
    // Each query also with its terms counted only in names and descriptions (as a word's variants are).
    for (const terms of queries)
      for (const about of [false, true]) {
        const ours = rank(postings, terms, about);
        const weighed = terms.map((term) => {
          const held = postings.held(term);
          return { term, about, idf: Math.log(1 + (skills.length - held + 0.5) / (held + 0.5)) };
        });
        expect([terms, about, ours]).toEqual([terms, about, referee(weighed)]);
        compared += ours.length;
      }
    // The catalog and queries are those of the quality figures: thousands of scored skills, 1,497 terms (947 before
    // the name's words side by side were also indexed joined).
    expect([skills.length, postings.termCount]).toEqual([504, 1497]);
    expect(compared).toBeGreaterThan(10_000);
  });

  it('rank the same with term ids looked up once (ranking.ts) as with each term looked up by itself', () => {
    const postings = postingsOf(skills);
    const terms = ['step', 'nosuchtermanywhere', postings.terms.term(0), postings.terms.term(1496), 'data'];
    const ids = postings.termIds(terms.map((term) => Buffer.from(term, 'utf8')));
    expect([...ids]).toEqual(terms.map((term) => postings.terms.idOf(term) ?? -1));
    expect([...ids].map((id) => postings.heldAt(id))).toEqual(terms.map((term) => postings.held(term)));
    expect(ids[1]).toBe(-1);
    const weighed = terms.map((term, at) => ({ term, idf: 1 + at / 10 }));
    const average = postings.totalLength / postings.skillCount;
    const byIds = postings.rank(weighed, average, ranked, ids);
    expect(byIds).toEqual(postings.rank(weighed, average, ranked));
    expect(byIds.length).toBeGreaterThan(100);
  });

  it('find the terms of names and descriptions by prefix and length, and no term only a body says', () => {
    const pool = new TermPool();
    const postings = postingsOf(
      [
        new Map([
          ['zeta', PLACE.name],
          ['body', PLACE.text | PLACE.heading],
          ['failure', PLACE.description],
        ]),
        new Map([
          ['alpha', PLACE.description | PLACE.text],
          ['bodyguard', PLACE.name],
          ['fail', PLACE.name],
          ['failures', PLACE.text],
          ['failé', PLACE.description],
        ]),
      ],
      pool,
    );
    const lexicon = pool.lexicon;
    const withPrefix = (prefix: string, maxLength: number) =>
      lexicon.aboutWithPrefix(Buffer.from(prefix), maxLength).map((id) => lexicon.term(id));
    expect(
      ['alpha', 'zeta', 'body', 'bodyguard', 'nothing'].map((term) => postings.isAboutTerm(term)),
    ).toEqual([true, true, false, true, false]);
    // `failures` stands in a body alone; `failé` is five characters (six bytes); `failure` is past 6.
    expect(withPrefix('fail', 6)).toEqual(['fail', 'failé']);
    expect(withPrefix('fail', 7)).toEqual(['fail', 'failure', 'failé']);
    expect(withPrefix('body', 99)).toEqual(['bodyguard']);
    expect(withPrefix('zz', 99)).toEqual([]);
    // A term another index says in a name is found by prefix too, and is about in that index alone.
    const other = postingsOf([new Map([['bodywork', PLACE.name]])], pool);
    expect(withPrefix('body', 99)).toEqual(['bodyguard', 'bodywork']);
    expect([postings.isAboutTerm('bodywork'), other.isAboutTerm('bodywork')]).toEqual([false, true]);
  });

  it('say where a term stands in a skill, as PLACE bits, and rank a term of the name above the same term elsewhere', () => {
    const postings = postingsOf([
      new Map([['ledger', PLACE.text]]),
      new Map([['ledger', PLACE.name | PLACE.description]]),
      text('other'),
    ]);
    expect([0, 1, 2].map((id) => postings.placesOf('ledger', id))).toEqual([
      PLACE.text,
      PLACE.name | PLACE.description,
      0,
    ]);
    expect(postings.placesOf('nosuch', 0)).toBe(0);
    expect(rank(postings, ['ledger']).map(({ id }) => id)).toEqual([1, 0]);
  });

  it('hold a skill id past 65,535 (4-byte ids) and rank ties by id', () => {
    const many = Array.from({ length: 70_000 }, (_, id) => (id % 7 === 0 ? text('seven') : text('other')));
    many.push(text('last', 'seven'));
    const best = rank(postingsOf(many), ['last', 'seven']);
    expect(best.map(({ id }) => id).slice(0, 3)).toEqual([70_000, 0, 7]);
    expect(best.length).toBe(10_001);
  });

  it('say how many bytes they take: postings, starts, lengths and the scratch of a ranking', () => {
    // 2 terms, 3 postings, 2 skills: ids 3 x 1 byte, places 3 x 4 bits (2 bytes), starts as 2 counts of 1 byte and a
    // block's start 4, lengths 2 x 4, scores 2 x 8, matched 2 x 1.
    // A pool of their own: 'a' and 'b' have lexicon ids 0 and 1, so they are terms 0 and 1.
    const postings = postingsOf([text('a', 'b'), text('b')], new TermPool());
    expect([postings.termCount, postings.bytes]).toEqual([2, 3 + 2 + 2 + 4 + 8 + 16 + 2]);
    expect([...postings.places]).toEqual([8, 8, 8]);
    expect([...postings.starts]).toEqual([0, 1, 3]);
  });

  it('find the postings of each term across blocks of 64 counts; past a count of 255, across blocks of 256 starts ended where they spread past 65,535 pairs', () => {
    // 600 terms, term k in skills k % 3 and (k + 1) % 3: two pairs each, starts 0, 2, 4, ... held as counts of 2 in
    // ten blocks.
    const terms = Array.from({ length: 600 }, (_, k) => `t${String(k).padStart(3, '0')}`);
    const skills = [0, 1, 2].map((skill) =>
      text(...terms.filter((_, k) => k % 3 === skill || (k + 1) % 3 === skill)),
    );
    const postings = postingsOf(skills);
    expect([...postings.starts]).toEqual(Array.from({ length: 601 }, (_, k) => 2 * k));
    const wrong = terms.filter((term, k) => {
      const found = rank(postings, [term])
        .map(({ id }) => id)
        .sort();
      return postings.held(term) !== 2 || found.join() !== [k % 3, (k + 1) % 3].sort().join();
    });
    expect(wrong).toEqual([]);
    expect(postings.bytes).toBe(1200 + 600 + (600 + 10 * 4) + 3 * 4 + 3 * 8 + 3);
    // 70,000 skills of one term: its count passes 255, so starts are held in blocks; it ends at 70,000, past 16 bits,
    // so that start is a block of its own (2 bytes a start, 8 a block).
    const wide = postingsOf(Array.from({ length: 70_000 }, () => text('only')));
    expect([[...wide.starts], wide.held('only')]).toEqual([[0, 70_000], 70_000]);
    expect(wide.bytes).toBe(70_000 * 4 + 35_000 + (2 * 2 + 2 * 8) + 70_000 * 4 + 70_000 * 8 + 70_000);
  });

  it('hold skill ids in 1 byte up to 256 skills, 2 up to 65,536, else 4', () => {
    const sized = (skills: number) => postingsOf(Array.from({ length: skills }, () => text('a'))).ids;
    expect([256, 257, 65_536, 65_537].map((skills) => sized(skills).BYTES_PER_ELEMENT)).toEqual([1, 2, 2, 4]);
    const last = postingsOf([...Array.from({ length: 255 }, () => text('a')), text('b')], new TermPool());
    // 'a': skills 0 to 254, then 'b': skill 255, the largest id a byte holds.
    expect([last.ids.length, ...last.ids.subarray(254)]).toEqual([256, 254, 255]);
    expect(rank(last, ['b']).map(({ id }) => id)).toEqual([255]);
  });

  describe('bound what a hostile repository can make them hold', () => {
    const words = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const skillsHolding = (postings: Postings, term: string) => rank(postings, [term]).map(({ id }) => id);

    it(`index a skill by its first ${MAX_SKILL_TERMS} distinct terms (its name and description come first)`, () => {
      const builder = new PostingsBuilder();
      builder.add(0, text('name', ...words('t', MAX_SKILL_TERMS + 10)));
      builder.add(1, text('other', `t${MAX_SKILL_TERMS}`));
      const postings = builder.done();
      expect(skillsHolding(postings, 'name')).toEqual([0]);
      expect(skillsHolding(postings, `t${MAX_SKILL_TERMS - 2}`)).toEqual([0]);
      // The term past the bound is not skill 0's; skill 1 holds it.
      expect(skillsHolding(postings, `t${MAX_SKILL_TERMS - 1}`)).toEqual([]);
      expect(skillsHolding(postings, `t${MAX_SKILL_TERMS}`)).toEqual([1]);
      expect(builder.cut).toBe(1);
    });

    it(`hold ${MAX_INDEX_TERMS} distinct terms at most; a term held still counts for every skill`, () => {
      const builder = new PostingsBuilder();
      const skills = Math.ceil(MAX_INDEX_TERMS / MAX_SKILL_TERMS);
      for (let id = 0; id < skills; id++) builder.add(id, text(...words(`s${id}w`, MAX_SKILL_TERMS)));
      builder.add(skills, text('s0w0', 'brandnew'));
      const postings = builder.done();
      expect(postings.termCount).toBe(MAX_INDEX_TERMS);
      // The later skill first: it holds fewer terms (BM25's length normalisation).
      expect(skillsHolding(postings, 's0w0')).toEqual([skills, 0]);
      expect(skillsHolding(postings, 'brandnew')).toEqual([]);
      // The skill that filled the table, and the one after it.
      expect(builder.cut).toBe(2);
    });

    it(`index each skill past ${MAX_INDEX_POSTINGS} pairs by its first ${MIN_SKILL_TERMS} terms`, () => {
      const builder = new PostingsBuilder();
      const shared = text(...words('w', MAX_SKILL_TERMS));
      const full = Math.ceil(MAX_INDEX_POSTINGS / MAX_SKILL_TERMS);
      for (let id = 0; id < full; id++) builder.add(id, shared);
      builder.add(full, text('late', ...words('w', MAX_SKILL_TERMS)));
      const postings = builder.done();
      expect(skillsHolding(postings, 'late')).toEqual([full]);
      expect(skillsHolding(postings, `w${MIN_SKILL_TERMS - 2}`)).toContain(full);
      expect(skillsHolding(postings, `w${MIN_SKILL_TERMS - 1}`)).not.toContain(full);
      expect([builder.cut, postings.bytes]).toEqual([
        1,
        // ids (2 bytes) and places (4 bits) of every pair, the term starts (ascending.ts: each term holds `full`
        // pairs, so a block ends at 65,535 past its first), lengths (4), scores (8), matched (1).
        (full * MAX_SKILL_TERMS + MIN_SKILL_TERMS) * 2.5 +
          Ascending.of(postings.starts, 8).byteLength +
          (full + 1) * 13,
      ]);
    });
  });

  it('refuse a skill added out of turn', () => {
    const builder = new PostingsBuilder();
    builder.add(0, text('a'));
    expect(() => builder.add(2, text('b'))).toThrow('skill 2 added as skill 1');
  });
});
