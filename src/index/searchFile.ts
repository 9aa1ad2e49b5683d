import { PLACE, Postings, reordered, type SkillIds } from './postings.ts';
import { FRESH, Scratch, type TypedArrayKind } from './scratch.ts';
import { TermTable } from './termTable.ts';
import type { SearchData } from './searchBuild.ts';

/**
 * A commit's search index as a file, saved beside its index file: a JSON header, then the postings' typed arrays
 * (little-endian) with the terms in the order of their bytes, then the terms so ordered. Loading it interns the terms
 * in the process's lexicon and puts the postings in the order of the terms' ids there: no SKILL.md is read or
 * tokenised again.
 */

const MAGIC = 'SKPS';
/**
 * The search file's format; a file of another format is rebuilt. Bump with any change to the tokenising rules.
 * 2: the terms sorted (termTable.ts).
 */
export const SEARCH_FORMAT = 2;

/** What a search file says of itself; the store checks it against the index file it goes with. */
export interface SearchHeader {
  format: number;
  commit: string;
  /** Skills of the index it was built from, in that index's order. */
  skills: number;
  /** The index file it was built from: its rules and options, as the store names them (JSON). */
  builtFrom: string;
  terms: number;
  pairs: number;
  /** Skill ids are 4 bytes (over 65,536 skills), else 2 (an index of at most 256 holds them in 1 byte in memory). */
  wide: boolean;
  termBytes: number;
  unread: number;
  cut: number;
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The bytes of a typed array, in this machine's order (little-endian: every platform Node runs on, checked). */
const bytesOf = (array: ArrayBufferView) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** The file of `data`, built from the index `builtFrom` names. */
export function encodeSearch(commit: string, builtFrom: string, data: SearchData): Buffer {
  if (!littleEndian) throw new Error('search files are written on little-endian machines only');
  const { postings } = data;
  // In memory a term's place is its lexicon id's; in the file, its bytes'.
  const order = postings.terms.byBytes();
  const terms = postings.terms.joined(order);
  const { starts, ids: held, places } = reordered(postings.starts, postings.ids, postings.places, order);
  const header: SearchHeader = {
    format: SEARCH_FORMAT,
    commit,
    skills: postings.skillCount,
    builtFrom,
    terms: postings.termCount,
    pairs: postings.ids.length,
    wide: postings.ids instanceof Uint32Array,
    termBytes: terms.length,
    unread: data.unread,
    cut: data.cut,
  };
  const head = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(head.length);
  const { lengths } = postings;
  // The file's ids are 2 or 4 bytes (its format from before 1-byte ids in memory).
  const ids = held instanceof Uint8Array ? Uint16Array.from(held) : held;
  return Buffer.concat([
    Buffer.from(MAGIC),
    length,
    head,
    ...[starts, lengths, ids, places].map(bytesOf),
    terms,
  ]);
}

/**
 * What a load works in: at 1,000 indexes of 100 skills the largest takes about 1 MiB. One whose arrays pass 16 MiB
 * makes them on its own.
 */
const LOAD_SCRATCH = new Scratch(16 * 1024 * 1024);

/**
 * Reads a typed array of `count` items at `at` (a copy: the file's buffer need not be aligned), into `scratch`
 * unless the array is kept.
 */
function take<T extends ArrayBufferView & { fill(value: number): T }>(
  bytes: Buffer,
  at: number,
  count: number,
  Kind: TypedArrayKind<T>,
  scratch: Scratch = FRESH,
) {
  const array = scratch.take(Kind, count);
  bytesOf(array).set(bytes.subarray(at, at + count * Kind.BYTES_PER_ELEMENT));
  return { array, end: at + count * Kind.BYTES_PER_ELEMENT };
}

/** The header of a search file, or undefined when it is not one. */
function headerOf(bytes: Buffer): { header: SearchHeader; at: number } | undefined {
  if (bytes.length < 8 || bytes.subarray(0, 4).toString('latin1') !== MAGIC) return undefined;
  const length = bytes.readUInt32LE(4);
  if (8 + length > bytes.length) return undefined;
  try {
    const header = JSON.parse(bytes.subarray(8, 8 + length).toString('utf8')) as SearchHeader;
    const counts = [header.skills, header.terms, header.pairs, header.termBytes, header.unread, header.cut];
    const fields = typeof header.wide === 'boolean' && typeof header.commit === 'string';
    if (header.format !== SEARCH_FORMAT || !fields || !counts.every((n) => Number.isSafeInteger(n) && n >= 0))
      return undefined;
    return { header, at: 8 + length };
  } catch {
    return undefined;
  }
}

/** Every PLACE bit. */
const ALL_PLACES = PLACE.name | PLACE.description | PLACE.heading | PLACE.text;

/**
 * Each term's skills ascending and below `skills`, the last term ending at the last pair, lengths summing to it, each
 * pair's places PLACE bits only (an index holds them in 4 bits).
 */
function consistent(
  header: SearchHeader,
  starts: Uint32Array,
  ids: SkillIds,
  places: Uint8Array,
  lengths: Uint32Array,
) {
  if (starts[0] !== 0 || starts[header.terms] !== header.pairs) return false;
  if (places.some((bits) => bits > ALL_PLACES)) return false;
  for (let term = 0; term < header.terms; term++) {
    const [from, to] = [starts[term]!, starts[term + 1]!];
    if (to < from || to > header.pairs) return false;
    for (let at = from; at < to; at++)
      if (ids[at]! >= header.skills || (at > from && ids[at]! <= ids[at - 1]!)) return false;
  }
  return lengths.reduce((sum, length) => sum + length, 0) === header.pairs;
}

/** A search file read back, checked whole (it is dataDir's, and may be damaged), or undefined. */
export function decodeSearch(bytes: Buffer): { header: SearchHeader; data: SearchData } | undefined {
  const read = headerOf(bytes);
  if (read === undefined || !littleEndian) return undefined;
  const { header } = read;
  const idBytes = header.wide ? 4 : 2;
  const size =
    read.at + (header.terms + 1 + header.skills) * 4 + header.pairs * (idBytes + 1) + header.termBytes;
  if (size !== bytes.length) return undefined;
  // Only the lengths and the ids put in order are kept: the rest is worked in the scratch (a decode runs to its end
  // at once, so one serves every load).
  const scratch = LOAD_SCRATCH;
  scratch.reset();
  const starts = take(bytes, read.at, header.terms + 1, Uint32Array, scratch);
  const lengths = take(bytes, starts.end, header.skills, Uint32Array);
  const ids = header.wide
    ? take(bytes, lengths.end, header.pairs, Uint32Array, scratch)
    : take(bytes, lengths.end, header.pairs, Uint16Array, scratch);
  const places = take(bytes, ids.end, header.pairs, Uint8Array, scratch);
  if (!consistent(header, starts.array, ids.array, places.array, lengths.array)) return undefined;
  const terms = TermTable.read(bytes.subarray(places.end), undefined, scratch);
  if (terms?.table.size !== header.terms) return undefined;
  // Held in the fewest bytes that hold them (1 for at most 256 skills): the file's are 2 or 4.
  let skillIds: SkillIds = ids.array;
  if (header.skills <= 0x100) (skillIds = scratch.take(Uint8Array, header.pairs)).set(ids.array);
  const inMemory = reordered(starts.array, skillIds, places.array, terms.order, scratch);
  const postings = new Postings(terms.table, inMemory.starts, inMemory.ids, inMemory.places, lengths.array);
  return { header, data: { postings, unread: header.unread, cut: header.cut } };
}
