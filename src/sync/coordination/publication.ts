import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ResolvedRef } from '../../git/index.ts';
import { COMMIT_PATTERN } from '../../shared/patterns.ts';
import type { ReasonOf } from '../../shared/reasons.ts';

/** What the lease holder published: the target it resolved, under which lease token, by whom, when (Redis's clock, ms). */
export interface Publication {
  target: ResolvedRef;
  token: string;
  by: string;
  at: number;
}

/** Why a follower did not take what it read as the holder's publication: the `publication-` reasons. */
export type PublicationReason = ReasonOf<'publication'>;

export type Checked =
  | { ok: true; publication: Publication }
  | { ok: false; reason: PublicationReason; detail: string };

/** The fields of a publication in Redis (`<prefix>commit:<key>`, a hash), in the order `checkPublication` reads them. */
export const PUBLICATION_FIELDS = ['commit', 'tag', 'ref', 'token', 'by', 'at', 'mac'] as const;

/** Longest lease token or replica id taken from Redis (a counter and `host/pid/nonce` are far shorter). */
const MAX_FIELD = 1024;

/**
 * HMAC-SHA256 (hex) of a publication of source `key` (its id and definition digest): every field that decides what a
 * follower serves, so changing any one of them, or moving it to another source, breaks it.
 */
export function signPublication(secret: string, key: string, publication: Publication): string {
  const { target, token, by, at } = publication;
  const signed = JSON.stringify([
    'skillpin-publication/1',
    key,
    target.commit,
    target.tag ?? '',
    target.tag === undefined ? '' : (target.ref ?? ''),
    token,
    by,
    at,
  ]);
  return createHmac('sha256', secret).update(signed, 'utf8').digest('hex');
}

/** A publication's fields as read back, when each is what a holder writes; `undefined` otherwise. */
function parsed(fields: readonly (string | null)[]): Publication | undefined {
  const [commit, tag, ref, token, by, at] = fields;
  const when = Number(at);
  if (commit == null || !COMMIT_PATTERN.test(commit) || !Number.isSafeInteger(when)) return undefined;
  if (token == null || by == null || token.length > MAX_FIELD || by.length > MAX_FIELD) return undefined;
  const common = { token, by, at: when };
  if (tag == null || tag === '') return { target: { commit }, ...common };
  if (!COMMIT_PATTERN.test(tag) || ref == null || ref === '' || ref.length > MAX_FIELD) return undefined;
  return { target: { commit, tag, ref }, ...common };
}

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
      if (seen !== undefined && publication.at < seen.at && publication.target.commit !== seen.target.commit)
        return {
          ok: false,
          reason: 'publication-replayed',
          detail: `the publication in Redis (commit ${publication.target.commit}) is older than one read before (commit ${seen.target.commit}): replayed`,
        };
      if (seen === undefined || publication.at >= seen.at) newest.set(key, publication);
      return read;
    },
    forget: (key: string) => void newest.delete(key),
  };
}
