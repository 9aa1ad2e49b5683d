/** An error's own message, one line, for wrapping library errors without their stacks. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0] ?? text;
}

/** The one order of paths and URIs: by UTF-16 code units, as the SDK sorts manifests. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The first of `count` places (0 to `count`) not before what is looked for, given `before(i)`, true for every place
 * before it and false from it on (items sorted): a bisection.
 */
export function firstNotBefore(count: number, before: (at: number) => boolean): number {
  let low = 0;
  let high = count;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * A copy of `text` that is a string of its own: a string cut out of a longer one can be a slice of it, and would keep
 * the whole (a SKILL.md text, a tree listing's line) alive for as long as it is held.
 */
export const ownCopy = (text: string): string => structuredClone(text);

/**
 * Items for a sentence, at most `shown` of them: `a, b, c` or `a, b, c and 7 more`. A message naming others
 * stays short however many there are (a repository can make thousands clash).
 */
export function someOf(items: readonly string[], shown = 3): string {
  const named = items.slice(0, shown).join(', ');
  return items.length > shown ? `${named} and ${items.length - shown} more` : named;
}

/** `1 file`, `2 files`. */
export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** Optimal string alignment distance: insertions, deletions, substitutions, and a swap of neighbours, 1 each. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/**
 * The candidate a mistyped word most likely meant: the same word in another case, else the nearest within a
 * third of the shorter length (rounded up); `undefined` when none is that near.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: { candidate: string; d: number } | undefined;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    if (other === lower) return candidate;
    const edits = editDistance(lower, other);
    if (edits > Math.ceil(Math.min(lower.length, other.length) / 3)) continue;
    // Ties go to the candidate of the same length: a letter mistyped is likelier than one added or left out.
    const d = edits + (other.length === lower.length ? 0 : 0.5);
    if (best === undefined || d < best.d) best = { candidate, d };
  }
  return best?.candidate;
}

/** The longest prefix of `bytes` of at most `limit` bytes that does not split a UTF-8 sequence. */
export function utf8Prefix(bytes: Uint8Array, limit: number): Uint8Array {
  if (bytes.byteLength <= limit) return bytes;
  let end = limit;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

// Control, zero-width and bidirectional-override characters would hide or reorder what a reader sees.
const INVISIBLE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** Text with every character that would hide or reorder others written out as `\u{XXXX}`, so a reader sees it. */
export function visible(text: string): string {
  return text.replace(
    INVISIBLE,
    (char) => `\\u{${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`,
  );
}

/** Characters of a caller's input a message quotes at most; past them it gives the length instead. */
export const QUOTED_INPUT_CHARS = 64;

/** A caller's input quoted in a message: whole when short, else its start and its length; visible either way. */
export function quoteInput(text: string): string {
  if (text.length <= QUOTED_INPUT_CHARS) return visible(JSON.stringify(text));
  return `${visible(JSON.stringify(text.slice(0, QUOTED_INPUT_CHARS)).slice(0, -1))}…" (${text.length} characters)`;
}

/** Text for one line of a listing: each run of whitespace holding a line break or tab is one space; visible. */
export function oneLine(text: string): string {
  return visible(text.replace(/[\t\n\r ]*[\t\n\r][\t\n\r ]*/g, ' '));
}
