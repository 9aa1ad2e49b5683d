import { describe, expect, it } from 'vitest';
import type { Namespace } from '../../src/catalog/index.ts';
import type { SourceConfig } from '../../src/config/index.ts';
import type { ResolvedRef } from '../../src/git/index.ts';
import type { SyncOutcome } from '../../src/shared/status.ts';
import type { Refusal, Role } from '../../src/sync/owner.ts';
import { syncByRole } from '../../src/sync/target.ts';
import { capturingLogger } from '../helpers/logs.ts';

const SERVING = 'a'.repeat(40);
const MOVED_FROM = 'b'.repeat(40);
const NEWER = 'c'.repeat(40);
/** What the source's own listing of the remote says. */
const LISTED = 'd'.repeat(40);

const sourceOf = (ref: string): SourceConfig => ({
  id: 'live',
  location: { kind: 'remote', url: 'https://git.example.com/acme/skills.git' },
  target: { kind: 'ref', ref },
  paths: [],
  strictNames: false,
  pollMs: 60_000,
  keep: 2,
  timeoutMs: 30_000,
});

type Follow = Extract<Role, { via: 'replicas' }>;
const holder = 'h/1/h';

/**
 * One follower's sync given what its owner says (`role`, whose `refuse` is counted here): the commit it went on to
 * load (the published one, or its own listing's), the refusals it counted, and what it logged at warn.
 */
async function followerStep(
  role: Omit<Follow, 'refuse' | 'kind' | 'via' | 'holder' | 'behind'>,
  ref = 'main',
) {
  const counted: string[] = [];
  const refuse = (refusal: Refusal) => void counted.push(`live ${refusal.reason}`);
  const { logger, lines } = capturingLogger();
  const loaded: string[] = [];
  await syncByRole(
    { kind: 'follow', via: 'replicas', holder, behind: false, ...role, refuse },
    sourceOf(ref),
    async (): Promise<ResolvedRef> => ({ commit: LISTED }),
    async (resolve, accept) => {
      const { commit } = await resolve();
      loaded.push(commit);
      // What it serves, and each commit, at its commit time: the published one is fetched before it is judged.
      const at = (c: string) => ({ commit: c, commitTime: TIMES[c] ?? '2026-12-01T00:00:00Z' }) as Namespace;
      const refused = accept?.(at(commit), { id: 'live', current: at(SERVING), retained: [] });
      const outcome = { id: 'live', ok: true, commit, changed: true } as SyncOutcome;
      return refused === undefined ? { outcome } : { outcome, refused };
    },
    { logger, serving: SERVING, movedFrom: [MOVED_FROM] },
  );
  const warned = lines.filter((line) => line.level === 40).map((line) => [line['reason'], line.msg]);
  return { loaded, counted, warned };
}

const hint = (target: ResolvedRef) => ({ hint: { published: { target }, at: 1 } });
/** Commit times: what it serves is of 1 December, an ancestor of it of November. */
const ANCESTOR = 'f'.repeat(40);
const TIMES: Record<string, string> = {
  [SERVING]: '2026-12-01T00:00:00Z',
  [ANCESTOR]: '2026-11-01T00:00:00Z',
};

describe('a follower given what the polling replica published', () => {
  it('fetches a published commit older than what it serves, refuses it (an ancestor, by its time), and lists', async () => {
    expect(await followerStep(hint({ commit: ANCESTOR }))).toEqual({
      loaded: [ANCESTOR, LISTED],
      counted: ['live publication-backward'],
      warned: [
        [
          'publication-backward',
          `the published commit ${ANCESTOR} (2026-11-01T00:00:00Z) is older than the ${SERVING} this replica serves (2026-12-01T00:00:00Z); this replica resolves the ref itself`,
        ],
      ],
    });
  });

  it('fetches a newer commit published for a branch, listing nothing', async () => {
    expect(await followerStep(hint({ commit: NEWER }))).toEqual({
      loaded: [NEWER],
      counted: [],
      warned: [],
    });
  });

  it('lists the refs itself when the publication was refused, and counts and logs why', async () => {
    const refused = {
      refused: {
        reason: 'publication-forged' as const,
        detail: 'the publication in Redis is not signed with …',
      },
    };
    expect(await followerStep(refused)).toEqual({
      loaded: [LISTED],
      counted: ['live publication-forged'],
      warned: [
        [
          'publication-forged',
          'the publication in Redis is not signed with …; this replica resolves the ref itself',
        ],
      ],
    });
  });

  it('never moves a branch back to a commit it moved away from on a publication: its own listing decides', async () => {
    expect(await followerStep(hint({ commit: MOVED_FROM }))).toEqual({
      loaded: [LISTED],
      counted: ['live publication-backward'],
      warned: [
        [
          'publication-backward',
          `the published commit ${MOVED_FROM} is one this replica moved away from (it serves ${SERVING}); this replica resolves the ref itself`,
        ],
      ],
    });
  });

  it('lists the refs itself when a tag it resolved is published at another commit', async () => {
    const expected = (ref: string) => ({
      loaded: [LISTED],
      counted: ['live publication-tag-moved'],
      warned: [
        [
          'publication-tag-moved',
          `the published commit ${NEWER} for tag ${ref} is not the ${SERVING} this replica resolved it to; this replica resolves the ref itself`,
        ],
      ],
    });
    expect(await followerStep(hint({ commit: NEWER }), 'refs/tags/v2')).toEqual(expected('refs/tags/v2'));
    // An annotated tag names itself by its tag object, whatever the ref is spelt as.
    const annotated = { commit: NEWER, tag: 'e'.repeat(40), ref: 'refs/tags/v2' };
    expect(await followerStep(hint(annotated), 'v2')).toEqual(expected('v2'));
    // The commit it serves, published again, is no move.
    expect((await followerStep(hint({ commit: SERVING }), 'refs/tags/v2')).counted).toEqual([]);
  });
});
