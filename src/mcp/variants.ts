import type { Lexicon } from '../index/lexicon.ts';
import type { Postings } from '../index/postings.ts';
import type { ParsedQuery } from './ranking.ts';
import type { SkillIndex } from './search.ts';

/**
 * Other forms of a query's words, where the stemmer leaves them apart (`fails`: fail, a description's `failure`:
 * failur; `call`, `callable`: callabl; `sharper`, `sharpness`: sharp): a term of a name or description that starts
 * with a query's term, or that the query's term starts with, a few letters apart. They count only in a name or
 * description, where a word says what the skill is for (counted in bodies too: tuning set top-1 0.850 against 0.867
 * before the description's bonus, 0.883 alike after it, for more walks). On the tuning set: top-1 0.867 to 0.883,
 * `fails` and `call` found the skills whose descriptions say `failure` and `callable`; `create` found `skill-creator`
 * above `pptx`.
 */

/** What a variant weighs, against the query's term it comes from (tuning set top-1: 0.2 and 0.3 0.883, 0.5 0.867). */
export const VARIANT_WEIGHT = 0.3;
/** Letters a variant adds to a term, or drops from it, at most. */
export const VARIANT_LETTERS = 3;
/** Letters of a term and of its variants, at least (`plan` has variants, `pr` none). */
export const MIN_VARIANT_LENGTH = 4;
/** Variants a query searches for at most, beside its terms: each is a walk over the skills holding it. */
export const MAX_VARIANTS = 32;

/**
 * What may be a variant of `term` in the indexes interned in `lexicon`: the lexicon's terms of names and descriptions
 * that start with it, a few letters longer, or that it starts with (found once, in the lexicon), by their text.
 */
function candidatesIn(
  lexicon: Lexicon,
  term: string,
  candidates: Map<string, Array<[Lexicon, number]>>,
): void {
  const ids = lexicon.aboutWithPrefix(Buffer.from(term, 'utf8'), term.length + VARIANT_LETTERS);
  for (
    let length = Math.max(MIN_VARIANT_LENGTH, term.length - VARIANT_LETTERS);
    length < term.length;
    length++
  ) {
    const prefix = lexicon.find(Buffer.from(term.slice(0, length), 'utf8'));
    if (lexicon.isAbout(prefix)) ids.push(prefix);
  }
  for (const id of ids) {
    const text = lexicon.term(id);
    const known = candidates.get(text);
    if (known === undefined) candidates.set(text, [[lexicon, id]]);
    else known.push([lexicon, id]);
  }
}

/** Whether some index of `byLexicon` says the term of `ids` (its id in each lexicon) in a name or description. */
const saidAbout = (
  byLexicon: ReadonlyMap<Lexicon, readonly Postings[]>,
  ids: ReadonlyArray<[Lexicon, number]>,
) =>
  ids.some(([lexicon, id]) =>
    byLexicon.get(lexicon)!.some(({ terms }) => terms.mayBeAbout(id) && terms.isAbout(terms.idOfLexicon(id))),
  );

/**
 * `query` with the variants of its terms found in the names and descriptions of `indexes` (only those searched):
 * each term's in their text's order, the first MAX_VARIANTS in all. A candidate is checked against the indexes only
 * when its turn comes (a query of common words has hundreds, each a walk over the indexes searched).
 */
export function withVariants(indexes: readonly SkillIndex[], query: ParsedQuery): ParsedQuery {
  const known = new Set(query.terms.map(({ term }) => term));
  const variants: Array<ParsedQuery['terms'][number]> = [];
  // Indexes by the lexicon they are interned in: one, unless a pool moved its live tables while some were searched.
  const byLexicon = new Map<Lexicon, Postings[]>();
  for (const { postings } of indexes) {
    const lexicon = postings.terms.lexicon;
    const same = byLexicon.get(lexicon);
    if (same === undefined) byLexicon.set(lexicon, [postings]);
    else same.push(postings);
  }
  for (const { term, word, weight } of query.terms) {
    if (term.length < MIN_VARIANT_LENGTH || variants.length === MAX_VARIANTS) continue;
    const candidates = new Map<string, Array<[Lexicon, number]>>();
    for (const lexicon of byLexicon.keys()) candidatesIn(lexicon, term, candidates);
    for (const variant of [...candidates.keys()].sort()) {
      if (variants.length === MAX_VARIANTS) break;
      if (known.has(variant) || !saidAbout(byLexicon, candidates.get(variant)!)) continue;
      known.add(variant);
      variants.push({ term: variant, word, weight: weight * VARIANT_WEIGHT, about: true });
    }
  }
  return variants.length === 0 ? query : { ...query, terms: [...query.terms, ...variants] };
}
