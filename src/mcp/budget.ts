/** skill_file: at most this many paths per call. */
export const MAX_FILE_PATHS = 8;
/** skill_file: at most this many bytes of one file. */
export const MAX_ENTRY_BYTES = 1024 * 1024;
/** skill_file: at most this many bytes in one call, all entries together. */
export const MAX_CALL_BYTES = 4 * 1024 * 1024;

/**
 * How many bytes each entry may return, from the manifest sizes alone (before any byte is read). Every entry
 * gets min(size, MAX_ENTRY_BYTES); when those exceed MAX_CALL_BYTES the call budget is shared by water-filling
 * over the sizes in ascending order, so equal sizes get equal shares and the answer does not depend on the
 * order of the paths.
 */
export function allowances(
  sizes: readonly number[],
  perEntry = MAX_ENTRY_BYTES,
  perCall = MAX_CALL_BYTES,
): number[] {
  const wanted = sizes.map((size) => Math.min(size, perEntry));
  if (wanted.reduce((sum, n) => sum + n, 0) <= perCall) return wanted;
  const order = wanted.map((n, index) => ({ n, index })).sort((a, b) => a.n - b.n);
  const result = new Array<number>(sizes.length).fill(0);
  let remaining = perCall;
  let position = 0;
  while (position < order.length) {
    const share = Math.floor(remaining / (order.length - position));
    const next = order[position]!;
    if (next.n <= share) {
      result[next.index] = next.n;
      remaining -= next.n;
      position++;
      continue;
    }
    // Everything from here on is larger than an equal share: each gets exactly the share.
    for (const rest of order.slice(position)) result[rest.index] = share;
    break;
  }
  return result;
}

/** skill_list: skills per page when the caller gives no `limit`, and the most a `limit` may ask. */
export const DEFAULT_LIST_LIMIT = 30;
export const MAX_LIST_LIMIT = 200;
/**
 * skill_list: a page ends before the skill that would take its skills past this many characters (text and
 * structured content together). Hosts cap tool output (Claude Code: 25,000 tokens by default); at about 3
 * characters a token for URIs and hex commits, a page stays near 5,000 tokens whatever the descriptions.
 */
export const LIST_PAGE_CHARS = 14_000;
/** skill_list: problems listed (errors first) on the first page; their count says how many there are in all. */
export const MAX_LISTED_PROBLEMS = 20;

/** skill_search: results when the caller gives no `limit`, and the most a `limit` may ask. */
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
/** skill_search: a query longer than this is refused (hostile input costs no more than a real question). */
export const MAX_SEARCH_QUERY_CHARS = 1000;
/** skill_search's text: a description is cut to this many characters (structured content has it whole). */
export const SEARCH_LINE_DESCRIPTION_CHARS = 200;
