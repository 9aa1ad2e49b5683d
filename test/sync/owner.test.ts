import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type {
  Coordination,
  CoordinationEvents,
  PollVerdict,
} from '../../src/sync/coordination/coordination.ts';
import type { Published } from '../../src/sync/coordination/publication.ts';
import type { Membership } from '../../src/sync/dataDir/membership.ts';
import type { SourceState, StateFile } from '../../src/sync/dataDir/state.ts';
import { createOwner, type Owner } from '../../src/sync/owner.ts';
import { manualClock } from '../helpers/clock.ts';
import { tempDir } from '../helpers/temp.ts';

const COMMIT = 'c'.repeat(40);
const source = { id: 'live', deadlineMs: 2_000 } as SourceConfig;

/**
 * An owner over precise fakes: a dataDir whose lease this process holds while `held` says so (or takes at the
 * `takes`th look), a state.json holding `entries`, and Redis answering `verdicts` in turn. Every call to the fakes is
 * written to `calls`, so a test holds the whole protocol of one sync.
 */
function ownerOver(options: { held?: boolean; takes?: number; verdicts?: PollVerdict[]; redis?: boolean }) {
  const dataDir = tempDir('skillpin-owner-');
  mkdirSync(path.join(dataDir, 'triggers'), { recursive: true });
  const calls: string[] = [];
  const entries: Record<string, SourceState> = {};
  let held = options.held ?? false;
  let looks = 0;
  const membership = {
    dataDir,
    holder: { pid: 1, host: 'here', since: '2026-01-01T00:00:00.000Z', nonce: 'n1' },
    holds: () => held,
    leaseOf: (id: string) => id,
    lease(id: string) {
      calls.push(`lease ${id}`);
      if (++looks === options.takes) held = true;
      return { ours: held };
    },
  } as unknown as Membership;
  const stateFile = {
    read: async () => ({ state: { version: 1, sources: entries } }),
  } as unknown as StateFile;
  const verdicts = [...(options.verdicts ?? [])];
  const heard: CoordinationEvents[] = [];
  const coordination = {
    poll: async (id: string) => {
      calls.push(`poll ${id}`);
      return verdicts.shift() ?? { kind: 'alone' };
    },
    publish: async (id: string, token: string, published: Published) =>
      void calls.push(`publish ${id} ${token} ${JSON.stringify(published)}`),
    refused: (id: string, reason: string) => void calls.push(`refused ${id} ${reason}`),
    follow: (_sources: unknown, events: CoordinationEvents) => void heard.push(events),
    close: async () => undefined,
  } as unknown as Coordination;
  const clock = manualClock();
  const triggered: string[] = [];
  const owner = createOwner({
    membership,
    stateFile,
    coordination: options.redis === false ? undefined : coordination,
    logger: silentLogger(),
    clock,
    askedWaitMs: 1_000,
    triggered: (id, why) => void triggered.push(`${id}: ${why}`),
  });
  const store = {
    sweep: async () => {
      calls.push('sweep');
      return ['objects/pack/tmp_pack_1'];
    },
  };
  const hold = (now: boolean) => {
    held = now;
  };
  return { owner, calls, entries, store, clock, dataDir, triggered, heard, hold };
}

const owners: Owner[] = [];
afterEach(async () => {
  for (const owner of owners.splice(0)) await owner.close();
});
const track = <T extends { owner: Owner }>(made: T) => {
  owners.push(made.owner);
  return made;
};

describe('who syncs a source: the dataDir and Redis behind one seam', () => {
  it("carries the replicas' triggers to the process of this machine that holds the source, and to no other", () => {
    const { owner, heard, triggered, hold } = track(ownerOver({ held: false }));
    owner.follow([source]);
    heard[0]!.triggered('live', 'a webhook at another replica');
    hold(true);
    heard[0]!.triggered('live', 'a new commit published by the replica polling it');
    expect(triggered).toEqual(['live: a new commit published by the replica polling it']);
  });

  it('alone: the lease of this machine taken (its store swept once), and no Redis configured', async () => {
    const { owner, calls, store } = track(ownerOver({ takes: 1, redis: false }));
    expect(await owner.role(source, store, undefined)).toEqual({ kind: 'alone' });
    expect(await owner.role(source, store, undefined)).toEqual({ kind: 'alone' });
    expect(calls).toEqual(['lease live', 'sweep']);
  });

  it('another process of this machine holds it: what it published is served, and Redis is never asked', async () => {
    const { owner, calls, entries, store } = track(ownerOver({ held: false }));
    entries['live'] = { current: COMMIT, retained: [], lastSync: '2026-01-01T00:00:00.000Z' };
    expect(await owner.role(source, store, undefined)).toEqual({
      kind: 'follow',
      via: 'machine',
      entry: entries['live'],
    });
    expect(calls).toEqual(['lease live']);
  });

  it('holding it among the replicas: the holder publishes under its token', async () => {
    const { owner, calls, store } = track(
      ownerOver({ held: true, verdicts: [{ kind: 'holder', token: '7' }] }),
    );
    const role = await owner.role(source, store, undefined);
    expect(role.kind).toBe('hold');
    if (role.kind !== 'hold') return;
    await role.publish({ target: { commit: COMMIT } });
    await role.publish({ refs: [{ name: 'refs/tags/v1', oid: COMMIT }] });
    expect(calls).toEqual([
      'poll live',
      `publish live 7 {"target":{"commit":"${COMMIT}"}}`,
      `publish live 7 {"refs":[{"name":"refs/tags/v1","oid":"${COMMIT}"}]}`,
    ]);
  });

  it('following a replica: a refusal is counted, and a hint older than that is behind; a newer one is not', async () => {
    const hint = (at: number): PollVerdict => ({
      kind: 'follower',
      holder: 'h/1/h',
      hint: { published: { target: { commit: COMMIT } }, at },
    });
    const { owner, calls, store, clock } = track(
      ownerOver({ held: true, verdicts: [hint(clock0()), hint(clock0() + 5), hint(clock0() + 20)] }),
    );
    const first = await owner.role(source, store, undefined);
    expect(first).toMatchObject({ kind: 'follow', via: 'replicas', holder: 'h/1/h', behind: false });
    if (first.kind !== 'follow' || first.via !== 'replicas') return;
    clock.advance(10);
    first.refuse({ reason: 'publication-backward', detail: 'moved away from it' });
    expect(await owner.role(source, store, undefined)).toMatchObject({ behind: true });
    expect(await owner.role(source, store, undefined)).toMatchObject({ behind: false });
    expect(calls).toEqual(['poll live', 'refused live publication-backward', 'poll live', 'poll live']);
  });

  it('asked while another process holds it: asks the holder in dataDir/triggers, then says it was late', async () => {
    const { owner, calls, store, dataDir } = track(ownerOver({ held: false }));
    const role = await owner.role(source, store, 'a webhook');
    expect(role).toEqual({
      kind: 'follow',
      via: 'machine',
      entry: undefined,
      late: "skillpin process (pid ?) holds this source's lease and did not publish a sync in time",
    });
    const ask = JSON.parse(readFileSync(path.join(dataDir, 'triggers', 'live.json'), 'utf8'));
    expect([ask.pid, ask.host, ask.why]).toEqual([1, 'here', 'a webhook']);
    // It looked for the lease while it waited (the holder might have gone), then gave up.
    expect(calls.every((call) => call === 'lease live')).toBe(true);
  });

  it('asked, and the holder went away meanwhile: this process takes the lease (sweeping) and asks Redis', async () => {
    const { owner, calls, store } = track(
      ownerOver({ takes: 3, verdicts: [{ kind: 'holder', token: '3' }] }),
    );
    const role = await owner.role(source, store, 'skillpin sync');
    expect(role.kind).toBe('hold');
    // The first look before asking, the second while waiting, the third takes it.
    expect(calls).toEqual(['lease live', 'lease live', 'lease live', 'sweep', 'poll live']);
  });
});

/** The manual clock's start: hints are timed on it. */
const clock0 = () => manualClock().now();
