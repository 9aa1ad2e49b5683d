import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { QUERIES, realisticCatalog } from '../../bench/searchCatalog.ts';
import {
  MAX_INDEX_POSTINGS,
  MAX_INDEX_TERMS,
  MAX_SKILL_TERMS,
  MIN_SKILL_TERMS,
  PostingsBuilder,
} from '../../src/mcp/postings.ts';
import { queryTerms, skillTerms } from '../../src/mcp/search.ts';

interface Ranked {
  id: number;
  score: number;
}
const ranked = (id: number, score: number): Ranked => ({ id, score });

/** MiniSearch over one field of terms, handed over as they are: the ranking the postings are held to. */
function miniSearchOf(skills: readonly string[][]): (terms: readonly string[]) => Ranked[] {
  const index = new MiniSearch<{ id: number; terms: string[] }>({
    fields: ['terms'],
    stringifyField: (terms: string[]) => terms as unknown as string,
    tokenize: (terms: string | string[]) => (typeof terms === 'string' ? terms.split(' ') : terms),
    processTerm: (term: string) => term,
  });
  for (const [id, terms] of skills.entries()) index.add({ id, terms });
  return (terms) =>
    index
      .search(terms.join(' '))
      .map(({ id, score }) => ({ id: id as number, score }))
      .sort((a, b) => b.score - a.score || a.id - b.id);
}

function postingsOf(skills: readonly string[][]) {
  const builder = new PostingsBuilder();
  for (const [id, terms] of skills.entries()) builder.add(id, terms);
  return builder.done();
}

describe('postings', () => {
  // bench/search.ts's realistic catalog, indexed as a namespace indexes it, and its paraphrased queries.
  const catalog = realisticCatalog();
  const skills = catalog.map((skill) => skillTerms(`${skill.name}\n${skill.description}`, skill.body));

  it('rank every query of bench/search.ts as MiniSearch does: the same skills, order and scores, to the last bit', () => {
    const postings = postingsOf(skills);
    const miniSearch = miniSearchOf(skills);
    const queries = [
      ...QUERIES.map(({ query }) => queryTerms(query)),
      // Each term alone, a term in no skill beside one in many, and nothing.
      ...[...postings.termIds.keys()].slice(0, 200).map((term) => [term]),
      ['nosuchtermanywhere', 'step'],
      [],
    ];
    let compared = 0;
    for (const terms of queries) {
      const ours = postings.rank(terms, ranked);
      expect([terms, ours]).toEqual([terms, miniSearch(terms)]);
      compared += ours.length;
    }
    // The catalog and queries are those of the quality figures: thousands of scored skills, 947 terms.
    expect([skills.length, postings.termCount]).toEqual([504, 947]);
    expect(compared).toBeGreaterThan(10_000);
  });

  it('hold a skill id past 65,535 (4-byte ids) and rank ties by id', () => {
    const many = Array.from({ length: 70_000 }, (_, id) => (id % 7 === 0 ? ['seven'] : ['other']));
    many.push(['last', 'seven']);
    const best = postingsOf(many).rank(['last', 'seven'], ranked);
    expect(best[0]).toEqual(miniSearchOf(many)(['last', 'seven'])[0]);
    expect(best.map(({ id }) => id).slice(0, 3)).toEqual([70_000, 0, 7]);
    expect(best.length).toBe(10_001);
  });

  it('count a term at most 255 times in one skill', () => {
    const postings = postingsOf([Array(300).fill('word'), Array(255).fill('word'), ['else']]);
    const [first, second] = postings.rank(['word'], ranked);
    expect([first!.score, [first!.id, second!.id]]).toEqual([second!.score, [0, 1]]);
  });

  it('say how many bytes they take: postings, starts, lengths and the scratch of a ranking', () => {
    // 2 terms, 3 postings, 2 skills: ids 3 x 2 bytes, counts 3 x 1, starts 3 x 4, lengths 2 x 4, scores 2 x 8,
    // matched 2 x 1.
    const postings = postingsOf([['a', 'b', 'b'], ['b']]);
    expect([postings.termCount, postings.bytes]).toEqual([2, 6 + 3 + 12 + 8 + 16 + 2]);
  });

  describe('bound what a hostile repository can make them hold', () => {
    const words = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const skillsHolding = (postings: ReturnType<typeof postingsOf>, term: string) =>
      postings.rank([term], ranked).map(({ id }) => id);

    it(`index a skill by its first ${MAX_SKILL_TERMS} distinct terms (its name and description come first)`, () => {
      const builder = new PostingsBuilder();
      builder.add(0, ['name', 'name', ...words('t', MAX_SKILL_TERMS + 10)]);
      builder.add(1, ['other', `t${MAX_SKILL_TERMS}`]);
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
      for (let id = 0; id < skills; id++) builder.add(id, words(`s${id}w`, MAX_SKILL_TERMS));
      builder.add(skills, ['s0w0', 'brandnew']);
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
      const shared = words('w', MAX_SKILL_TERMS);
      const full = Math.ceil(MAX_INDEX_POSTINGS / MAX_SKILL_TERMS);
      for (let id = 0; id < full; id++) builder.add(id, shared);
      builder.add(full, ['late', ...words('w', MAX_SKILL_TERMS)]);
      const postings = builder.done();
      expect(skillsHolding(postings, 'late')).toEqual([full]);
      expect(skillsHolding(postings, `w${MIN_SKILL_TERMS - 2}`)).toContain(full);
      expect(skillsHolding(postings, `w${MIN_SKILL_TERMS - 1}`)).not.toContain(full);
      expect([builder.cut, postings.bytes]).toEqual([
        1,
        // ids (2 bytes) and counts (1) of every pair, the term starts (4), lengths (4), scores (8), matched (1).
        (full * MAX_SKILL_TERMS + MIN_SKILL_TERMS) * 3 + (MAX_SKILL_TERMS + 2) * 4 + (full + 1) * 13,
      ]);
    });
  });

  it('refuse a skill added out of turn', () => {
    const builder = new PostingsBuilder();
    builder.add(0, ['a']);
    expect(() => builder.add(2, ['b'])).toThrow('skill 2 added as skill 1');
  });
});
