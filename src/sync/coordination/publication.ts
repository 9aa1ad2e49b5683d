import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { RemoteRef, ResolvedRef } from '../../git/index.ts';
import { COMMIT_PATTERN } from '../../shared/patterns.ts';
import type { ReasonOf } from '../../shared/reasons.ts';

/** What a holder publishes for those who follow it: the target a ref resolved to, or the refs a `refs:` source listed. */
export type Published = { target: ResolvedRef } | { refs: RemoteRef[] };

/** What the lease holder published, under which lease token, by whom, when (Redis's clock, ms). */
export interface Publication {
  published: Published;
  token: string;
  by: string;
  at: number;
}

/** Most refs one publication of a `refs:` source names (a listing past it is not published: each replica lists). */
export const MAX_PUBLISHED_REFS = 10_000;
/** Longest `refs` field of a publication, in bytes (MAX_PUBLISHED_REFS refs of about 130 bytes, and room). */
export const MAX_PUBLISHED_REFS_BYTES = 4 * 1024 * 1024;

/** A listing as published: [name, oid, peeled?] per ref, sorted by name, as JSON (what is signed and compared). */
export function refsText(refs: readonly RemoteRef[]): string {
  const rows = refs.map((ref) =>
    ref.peeled === undefined ? [ref.name, ref.oid] : [ref.name, ref.oid, ref.peeled],
  );
  return JSON.stringify(rows.sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0)));
}

/** What a publication names, in one line that changes exactly when it does (a commit, or the listing's digest). */
export function namedBy(published: Published): string {
  if ('target' in published) return published.target.commit;
  return createHash('sha256').update(refsText(published.refs)).digest('hex');
}

const REF_NAME = /^refs\/(heads|tags)\/[^\0\s]{1,1000}$/;

/** The refs of a publication's `refs` field, when each is what a holder writes; `undefined` otherwise. */
function parsedRefs(text: string): RemoteRef[] | undefined {
  if (Buffer.byteLength(text, 'utf8') > MAX_PUBLISHED_REFS_BYTES) return undefined;
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows) || rows.length > MAX_PUBLISHED_REFS) return undefined;
  const refs: RemoteRef[] = [];
  for (const row of rows) {
    if (!Array.isArray(row) || row.length < 2 || row.length > 3) return undefined;
    const [name, oid, peeled] = row as unknown[];
    if (typeof name !== 'string' || !REF_NAME.test(name)) return undefined;
    if (typeof oid !== 'string' || !COMMIT_PATTERN.test(oid)) return undefined;
    if (peeled !== undefined && (typeof peeled !== 'string' || !COMMIT_PATTERN.test(peeled)))
      return undefined;
    refs.push(peeled === undefined ? { name, oid } : { name, oid, peeled });
  }
  return refs;
}

/** Whether followers take `refs` as a publication's `refs` field (count, bytes, names and commit ids). */
export const publishable = (refs: readonly RemoteRef[]): boolean => parsedRefs(refsText(refs)) !== undefined;

/** Why a follower did not take what it read as the holder's publication: the `publication-` reasons. */
export type PublicationReason = ReasonOf<'publication'>;

export type Checked =
  | { ok: true; publication: Publication }
  | { ok: false; reason: PublicationReason; detail: string };

/** The fields of a publication in Redis (`<prefix>commit:<key>`, a hash), in the order `checkPublication` reads them. */
export const PUBLICATION_FIELDS = ['commit', 'tag', 'ref', 'refs', 'token', 'by', 'at', 'mac'] as const;

/** Longest lease token or replica id taken from Redis (a counter and `host/pid/nonce` are far shorter). */
const MAX_FIELD = 1024;

/**
 * HMAC-SHA256 (hex) of a publication of source `key` (its id and definition digest): every field that decides what a
 * follower serves, so changing any one of them, or moving it to another source, breaks it.
 */
export function signPublication(secret: string, key: string, publication: Publication): string {
  const { published, token, by, at } = publication;
  const what =
    'target' in published
      ? [
          'skillpin-publication/1',
          key,
          published.target.commit,
          published.target.tag ?? '',
          published.target.tag === undefined ? '' : (published.target.ref ?? ''),
        ]
      : ['skillpin-publication/refs/1', key, refsText(published.refs)];
  const signed = JSON.stringify([...what, token, by, at]);
  return createHmac('sha256', secret).update(signed, 'utf8').digest('hex');
}

/** A publication's fields as read back, when each is what a holder writes; `undefined` otherwise. */
function parsed(fields: readonly (string | null)[]): Publication | undefined {
  const [commit, tag, ref, refs, token, by, at] = fields;
  const when = Number(at);
  if (!Number.isSafeInteger(when)) return undefined;
  if (token == null || by == null || token.length > MAX_FIELD || by.length > MAX_FIELD) return undefined;
  const common = { token, by, at: when };
  if (refs != null && refs !== '') {
    const listed = parsedRefs(refs);
    return listed === undefined || (commit ?? '') !== ''
      ? undefined
      : { published: { refs: listed }, ...common };
  }
  if (commit == null || !COMMIT_PATTERN.test(commit)) return undefined;
  if (tag == null || tag === '') return { published: { target: { commit } }, ...common };
  if (!COMMIT_PATTERN.test(tag) || ref == null || ref === '' || ref.length > MAX_FIELD) return undefined;
  return { published: { target: { commit, tag, ref } }, ...common };
}

/** A publication in a log line: its commit, or how many refs it lists. */
const describe = (published: Published) =>
  'target' in published ? `commit ${published.target.commit}` : `a listing of ${published.refs.length} refs`;

/** Whether `given` is the MAC `expected`, compared in constant time (both are 64 hex digits when well formed). */
function sameMac(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Checks a publication read from Redis (fields in PUBLICATION_FIELDS order): signed with `secret` for source `key`,
 * and its time within `freshMs` of `now` (Redis's time, as this replica read it in the same poll) either way.
 * `undefined`: nothing was published.
 */
export function checkPublication(
  fields: readonly (string | null)[],
  options: { secret: string; key: string; now: number; freshMs: number },
): Checked | undefined {
  if (fields.every((field) => field == null)) return undefined;
  const mac = fields[PUBLICATION_FIELDS.indexOf('mac')];
  if (mac == null || mac === '')
    return { ok: false, reason: 'publication-unsigned', detail: 'the publication in Redis is not signed' };
  const publication = parsed(fields);
  if (publication === undefined || !sameMac(mac, signPublication(options.secret, options.key, publication)))
    return {
      ok: false,
      reason: 'publication-forged',
      detail: "the publication in Redis is not signed with this replica's coordination.secret",
    };
  const age = options.now - publication.at;
  if (Math.abs(age) > options.freshMs)
    return {
      ok: false,
      reason: 'publication-stale',
      detail: `the publication in Redis is ${Math.round(Math.abs(age) / 1000)} s ${age > 0 ? 'old' : "ahead of Redis's clock"} (at most ${Math.round(options.freshMs / 1000)} s: the poll interval and the lease)`,
    };
  return { ok: true, publication };
}

/**
 * A follower's reading of each source's publications (by shared key): checked, and refused when older than one it
 * read before that names another commit (a replay of an authentic one: a rollback).
 */
export function publicationReader(secret: string) {
  const newest = new Map<string, Publication>();
  return {
    read(
      key: string,
      fields: readonly (string | null)[],
      options: { now: number; freshMs: number },
    ): Checked | undefined {
      const read = checkPublication(fields, { secret, key, ...options });
      if (read === undefined || !read.ok) return read;
      const { publication } = read;
      const seen = newest.get(key);
      const [now, before] = [namedBy(publication.published), seen && namedBy(seen.published)];
      if (seen !== undefined && publication.at < seen.at && now !== before)
        return {
          ok: false,
          reason: 'publication-replayed',
          detail: `the publication in Redis (${describe(publication.published)}) is older than one read before (${describe(seen.published)}): replayed`,
        };
      if (seen === undefined || publication.at >= seen.at) newest.set(key, publication);
      return read;
    },
    forget: (key: string) => void newest.delete(key),
  };
}
