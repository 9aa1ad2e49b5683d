import { describe, expect, it } from 'vitest';
import { TermPool } from '../../src/index/lexicon.ts';
import { PLACE, type Postings, PostingsBuilder } from '../../src/index/postings.ts';
import type { ParsedQuery } from '../../src/mcp/ranking.ts';
import type { SkillIndex } from '../../src/mcp/search.ts';
import {
  MAX_VARIANTS,
  MIN_VARIANT_LENGTH,
  VARIANT_LETTERS,
  VARIANT_WEIGHT,
  withVariants,
} from '../../src/mcp/variants.ts';

/** An index of one skill per map of terms to places, interned in `pool`. */
function indexOf(pool: TermPool, skills: ReadonlyArray<ReadonlyMap<string, number>>): SkillIndex {
  const builder = new PostingsBuilder(pool);
  for (const [id, terms] of skills.entries()) builder.add(id, terms);
  return { postings: builder.done() } as SkillIndex;
}

/**
 * The referee: every term of every index searched, in turn, that stands in a name or description there and starts
 * with a query's term (up to VARIANT_LETTERS more) or that the term starts with (MIN_VARIANT_LENGTH at least); each
 * term's sorted, the first MAX_VARIANTS in all, none a query's term or found before.
 */
function referee(indexes: readonly SkillIndex[], query: ParsedQuery): string[] {
  const known = new Set(query.terms.map(({ term }) => term));
  const kept: string[] = [];
  for (const { term } of query.terms) {
    if (term.length < MIN_VARIANT_LENGTH) continue;
    const found = new Set<string>();
    for (const { postings } of indexes)
      for (let id = 0; id < postings.termCount; id++) {
        const other = postings.terms.term(id);
        const longer = other.startsWith(term) && other.length <= term.length + VARIANT_LETTERS;
        const shorter =
          term.startsWith(other) &&
          other.length < term.length &&
          other.length >= Math.max(MIN_VARIANT_LENGTH, term.length - VARIANT_LETTERS);
        if ((longer || shorter) && postings.isAboutTerm(other)) found.add(other);
      }
    for (const variant of [...found].sort())
      if (!known.has(variant) && kept.length < MAX_VARIANTS) {
        known.add(variant);
        kept.push(variant);
      }
  }
  return kept;
}

const queryOf = (...terms: string[]): ParsedQuery => ({
  terms: terms.map((term) => ({ term, word: term, weight: 1 })),
  name: terms.join('-'),
});
const variantsOf = (indexes: readonly SkillIndex[], query: ParsedQuery) =>
  withVariants(indexes, query).terms.slice(query.terms.length);

describe('variants of a query', () => {
  const pool = new TermPool();
  // 300 indexes: most say `deployment` in a description, one says `deployer` in a name, one `deploys` in a body only,
  // one `depl` in a name; 40 forms of `test` (`testa` .. `testan`) in names, spread over them.
  const forms = Array.from(
    { length: 40 },
    (_, i) => `test${String.fromCharCode(97 + (i % 26))}${i >= 26 ? 'x' : ''}`,
  );
  const indexes = Array.from({ length: 300 }, (_, i) =>
    indexOf(pool, [
      new Map<string, number>([
        ['deploy', PLACE.text],
        ...(i % 3 === 0 ? [['deployment', PLACE.description] as [string, number]] : []),
        ...(i === 150 ? [['deployer', PLACE.name] as [string, number]] : []),
        ...(i === 151 ? [['deploys', PLACE.text] as [string, number]] : []),
        ...(i === 152 ? [['depl', PLACE.name] as [string, number]] : []),
        [forms[i % forms.length]!, PLACE.name],
      ]),
    ]),
  );

  it('are the terms of names and descriptions of the indexes searched, as the referee finds them, each once', () => {
    const query = queryOf('deploy', 'deployer', 'test');
    const found = variantsOf(indexes, query);
    expect(found.map(({ term }) => term)).toEqual(referee(indexes, query));
    // `deployer` is the query's own term; `deploys` is said in a body only; `deployment` is 4 letters past `deploy`;
    // `depl` is what `deploy` starts with; then the forms of `test` in their order, up to MAX_VARIANTS in all.
    const sortedForms = [...forms].sort();
    expect(found.map(({ term }) => term)).toEqual(['depl', ...sortedForms.slice(0, MAX_VARIANTS - 1)]);
    expect(found[0]).toEqual({ term: 'depl', word: 'deploy', weight: VARIANT_WEIGHT, about: true });
  });

  it('come only from the indexes searched', () => {
    // Without index 152 `depl` is in no name searched; without 150 `deployer` neither (here not a query's term).
    const some = indexes.filter((_, i) => i !== 150 && i !== 152 && i % 40 < 20);
    const query = queryOf('deploy', 'test');
    const found = variantsOf(some, query).map(({ term }) => term);
    expect(found).toEqual(referee(some, query));
    expect(found).toEqual([...forms.filter((_, i) => i < 20)].sort());
    expect(variantsOf(indexes, queryOf('deploy')).map(({ term }) => term)).toEqual(['depl', 'deployer']);
    expect(variantsOf([indexes[150]!, indexes[151]!], queryOf('deploy')).map(({ term }) => term)).toEqual([
      'deployer',
    ]);
  });

  it('are found in every index that says them, the filter of its names and descriptions never saying no wrongly', () => {
    const wrong: string[] = [];
    for (const { postings } of indexes as Array<{ postings: Postings }>)
      for (let id = 0; id < postings.termCount; id++)
        if (postings.terms.isAbout(id) && !postings.terms.mayBeAbout(postings.terms.lexiconIds[id]!))
          wrong.push(postings.terms.term(id));
    expect(wrong).toEqual([]);
    // And it says no to most terms an index does not say in a name or description.
    const other = Array.from({ length: 2000 }, (_, i) => pool.lexicon.intern(Buffer.from(`other${i}`)));
    const yes = other.filter((id) => indexes[0]!.postings.terms.mayBeAbout(id)).length;
    expect(yes).toBeLessThan(100);
  });
});
