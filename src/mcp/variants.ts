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

/** What a term's variants are looked up by in each index: its bytes and length, and its shorter prefixes'. */
function lookupsOf(term: string) {
  const prefixes: Array<{ prefix: string; key: Buffer }> = [];
  for (
    let length = Math.max(MIN_VARIANT_LENGTH, term.length - VARIANT_LETTERS);
    length < term.length;
    length++
  ) {
    const prefix = term.slice(0, length);
    prefixes.push({ prefix, key: Buffer.from(prefix, 'utf8') });
  }
  return { key: Buffer.from(term, 'utf8'), longest: term.length + VARIANT_LETTERS, prefixes };
}

/**
 * The terms of `postings`' names and descriptions that are variants of a term (`lookups`): starting with it, or what
 * it starts with (found in its term table, no term list kept).
 */
function variantsIn(postings: Postings, lookups: ReturnType<typeof lookupsOf>, found: Set<string>): void {
  for (const variant of postings.aboutWithPrefix(lookups.key, lookups.longest)) found.add(variant);
  for (const { prefix, key } of lookups.prefixes) if (postings.isAboutTerm(key)) found.add(prefix);
}

/** `query` with the variants of its terms found in the names and descriptions of `indexes` (only those searched). */
export function withVariants(indexes: readonly SkillIndex[], query: ParsedQuery): ParsedQuery {
  const known = new Set(query.terms.map(({ term }) => term));
  const variants: Array<ParsedQuery['terms'][number]> = [];
  for (const { term, word, weight } of query.terms) {
    if (term.length < MIN_VARIANT_LENGTH) continue;
    const found = new Set<string>();
    const lookups = lookupsOf(term);
    for (const { postings } of indexes) variantsIn(postings, lookups, found);
    for (const variant of [...found].sort()) {
      if (known.has(variant) || variants.length === MAX_VARIANTS) continue;
      known.add(variant);
      variants.push({ term: variant, word, weight: weight * VARIANT_WEIGHT, about: true });
    }
  }
  return variants.length === 0 ? query : { ...query, terms: [...query.terms, ...variants] };
}
