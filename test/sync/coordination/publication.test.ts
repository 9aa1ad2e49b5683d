import { describe, expect, it } from 'vitest';
import { checkPublication, signPublication } from '../../../src/sync/coordination/publication.ts';

const SECRET = 'coordination-secret-2b9e41d07c';
const KEY = 'live:0123456789abcdef';
const COMMIT = 'c'.repeat(40);
/** Redis's time when the follower read it. */
const NOW = 1_765_080_000_000;

/** The fields of a publication signed by the holder at `at` (Redis's clock), in PUBLICATION_FIELDS order. */
const fields = (at: number) => [
  COMMIT,
  '',
  '',
  '',
  '7',
  'host-a/1/abc',
  String(at),
  signPublication(SECRET, KEY, {
    published: { target: { commit: COMMIT } },
    token: '7',
    by: 'host-a/1/abc',
    at,
  }),
];
const check = (at: number) =>
  checkPublication(fields(at), { secret: SECRET, key: KEY, now: NOW, freshMs: 90_000 });

describe('a publication checked against Redis time', () => {
  it('is fresh within the poll and the lease of Redis time either way, and stale one ms further', () => {
    for (const at of [NOW - 90_000, NOW, NOW + 90_000]) expect(check(at)).toMatchObject({ ok: true });
    expect(check(NOW - 90_001)).toEqual({
      ok: false,
      reason: 'publication-stale',
      detail: 'the publication in Redis is 90 s old (at most 90 s: the poll interval and the lease)',
    });
    expect(check(NOW + 90_001)).toEqual({
      ok: false,
      reason: 'publication-stale',
      detail:
        "the publication in Redis is 90 s ahead of Redis's clock (at most 90 s: the poll interval and the lease)",
    });
  });
});
