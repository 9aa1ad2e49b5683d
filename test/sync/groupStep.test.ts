import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/index.ts';
import type { RemoteRef } from '../../src/git/index.ts';
import type { GroupListing } from '../../src/sync/dataDir/state.ts';
import { listByRole } from '../../src/sync/groupStep.ts';
import type { Published, Refusal, Role } from '../../src/sync/owner.ts';
import type { SourceRecord } from '../../src/sync/record.ts';
import type { Source } from '../../src/sync/source.ts';
import { capturingLogger } from '../helpers/logs.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const config = {
  id: 'live',
  location: { kind: 'remote', url: 'https://git.example.com/acme/skills.git' },
  target: { kind: 'refs', patterns: ['v*'], maxRefs: 100 },
  paths: [],
  keep: 1,
} as unknown as SourceConfig;
/** What the remote lists now: v1 at A, v2 at C. */
const REMOTE: RemoteRef[] = [
  { name: 'refs/tags/v1', oid: A },
  { name: 'refs/tags/v2', oid: C },
];
const listingOf = (refs: Array<[string, string]>): GroupListing => ({
  refs: refs.map(([name, commit]) => ({ name: `refs/tags/${name}`, id: `live.${name}`, commit })),
  gone: [],
  problems: [],
});

/**
 * One listing of the `refs:` source given `role` (its `publish` and `refuse` recorded) and what it listed before:
 * the refs it serves after, how often it listed the remote itself, and what it published and refused.
 */
async function listed(role: Role, before: SourceRecord) {
  const calls: string[] = [];
  const source = {
    id: 'live',
    listRefs: async () => {
      calls.push('listed the remote');
      return REMOTE;
    },
  } as unknown as Source;
  const withHooks =
    role.kind === 'hold'
      ? { ...role, publish: async (p: Published) => void calls.push(`published ${JSON.stringify(p)}`) }
      : role.kind === 'follow' && role.via === 'replicas'
        ? { ...role, refuse: (r: Refusal) => void calls.push(`refused ${r.reason}`) }
        : role;
  const { logger } = capturingLogger();
  const step = await listByRole(withHooks as Exclude<Role, { via: 'machine' }>, source, config, before, {
    why: 'poll',
    at: () => '2026-12-07T00:00:00.000Z',
    logger,
    taken: new Set(),
  });
  const refs = step.record.listing?.refs.map((r) => `${r.name}@${r.commit[0]}`);
  return { ok: step.outcome.ok, refs, calls };
}

const follow = (published?: RemoteRef[]): Role => ({
  kind: 'follow',
  via: 'replicas',
  holder: 'h/1/h',
  behind: false,
  refuse: () => undefined,
  ...(published === undefined ? {} : { hint: { published: { refs: published }, at: 1 } }),
});
const nothing: SourceRecord = { tried: false };

describe('one listing of a refs: source, given who lists it', () => {
  it('holding it: lists the remote once and publishes exactly what it listed', async () => {
    const role: Role = { kind: 'hold', publish: async () => undefined };
    expect(await listed(role, nothing)).toEqual({
      ok: true,
      refs: ['refs/tags/v2@c', 'refs/tags/v1@a'],
      calls: ['listed the remote', `published ${JSON.stringify({ refs: REMOTE })}`],
    });
  });

  it("following a replica: serves the holder's listing without listing the remote", async () => {
    const hint = [
      { name: 'refs/tags/v1', oid: A },
      { name: 'refs/tags/v3', oid: B },
    ];
    expect(await listed(follow(hint), { tried: true, listing: listingOf([['v1', A]]) })).toEqual({
      ok: true,
      refs: ['refs/tags/v3@b', 'refs/tags/v1@a'],
      calls: [],
    });
  });

  it('a published tag at another commit than this replica resolved it to: refused, and it lists the remote', async () => {
    const hint = [{ name: 'refs/tags/v1', oid: B }];
    expect(await listed(follow(hint), { tried: true, listing: listingOf([['v1', A]]) })).toEqual({
      ok: true,
      refs: ['refs/tags/v2@c', 'refs/tags/v1@a'],
      calls: ['refused publication-tag-moved', 'listed the remote'],
    });
  });

  it('nothing published yet: keeps what it listed, or is pending when it listed nothing', async () => {
    expect(await listed(follow(), { tried: true, listing: listingOf([['v1', A]]) })).toEqual({
      ok: true,
      refs: ['refs/tags/v1@a'],
      calls: [],
    });
    expect(await listed(follow(), nothing)).toEqual({ ok: false, refs: undefined, calls: [] });
  });
});
