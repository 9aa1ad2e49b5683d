import type { SourceConfig } from '../config/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/log.ts';
import type { Coordination, CoordinationEvents } from './coordination/coordination.ts';
import type { Published, PublicationReason } from './coordination/publication.ts';
import { leaseHolder, type Membership } from './dataDir/membership.ts';
import { askSync, waitForPublication, watchDataDir } from './dataDir/published.ts';
import type { SourceState, StateFile } from './dataDir/state.ts';
import type { Source } from './source.ts';

// Who syncs a source: the one question a sync asks, answered by one seam. The dataDir answers it among the
// processes of one machine (a lease file), Redis among replicas (a lease on Redis's clock); they compose: the
// process holding a source's dataDir lease is the one that takes part in Redis for its machine.

export type { Published } from './coordination/publication.ts';

/** A publication another replica made that this one did not take, and why (logged and counted by the caller). */
export interface Refusal {
  reason: PublicationReason;
  detail: string;
}

/**
 * Who syncs a source for this sync:
 * - `alone`: nobody to agree with (no Redis, Redis down, a pinned or local source): this process syncs it;
 * - `hold`: this process syncs it and publishes what it resolved (`publish`) for the replicas that follow;
 * - `follow` `machine`: another process of this machine holds it: serve what it published (state.json, no network);
 * - `follow` `replicas`: another replica holds it: take its publication (`hint`), confirmed by fetching.
 */
export type Role =
  | { kind: 'alone' }
  | { kind: 'hold'; publish(published: Published): Promise<void> }
  | {
      kind: 'follow';
      via: 'machine';
      entry: SourceState | undefined;
      /** Asked, the holder did not publish in time: who it is and what it did not do, as a sentence. */
      late?: string;
    }
  | {
      kind: 'follow';
      via: 'replicas';
      holder: string;
      /** What the holder published last, when (ms, this replica's clock), signed and fresh; absent: nothing yet. */
      hint?: { published: Published; at: number };
      /** The hint is older than this replica's own last resolution of the source (alone, or after a refusal). */
      behind: boolean;
      refused?: Refusal;
      /** Counts a publication this replica did not take (the caller logs it); it resolves the source itself. */
      refuse(refusal: Refusal): void;
    };

/** Who syncs each source: asked once per sync; triggers (webhooks, `skillpin sync`) carried to whoever holds. */
export interface Owner {
  /**
   * Who syncs `source` for this sync. `asked`: why a webhook or `skillpin sync` asked for it, so a holder on this machine
   * is asked to sync and its publication awaited (a holder that went away meanwhile makes this process hold).
   */
  role(source: SourceConfig, store: Pick<Source, 'sweep'>, asked: string | undefined): Promise<Role>;
  /** Takes `id`'s lease on this machine unless another process holds it (a start sweeps its store first). */
  lease(id: string, store: Pick<Source, 'sweep'>): Promise<boolean>;
  /** Reports the commit this process lists per source to the replicas (`undefined`: none yet). */
  report(served: Readonly<Record<string, string | undefined>>): void;
  /** What the replicas serve and coordination's state, for status; absent without Redis. */
  readonly replicas: Pick<Coordination, 'replicas' | 'status'> | undefined;
  /** A webhook or `skillpin sync` here asked for `id`: every replica hears it. */
  announce(id: string, why: string): void;
  /** The sources followed now (after a start or a reconfigure). */
  follow(sources: readonly SourceConfig[]): void;
  close(): Promise<void>;
}

/** Told when a source should sync because of what another process or replica did. */
export type Triggered = (id: string, why: string) => void;

export interface OwnerOptions {
  membership: Membership;
  stateFile: StateFile;
  /** Replicas on other machines; absent: this machine's holder syncs alone. */
  coordination?: Coordination;
  logger: Logger;
  clock: Clock;
  /** How long a sync asked of another process's lease waits for its publication (`skillpin sync --wait`). */
  askedWaitMs?: number;
  triggered: Triggered;
}

/** Takes `source`'s dataDir lease unless held: a new holder first sweeps what a gone one's transfer left. */
async function leased(options: OwnerOptions, id: string, store: Pick<Source, 'sweep'>): Promise<boolean> {
  const { membership, logger } = options;
  if (membership.holds(id)) return true;
  if (!membership.lease(id).ours) return false;
  const removed = await store.sweep();
  if (removed.length > 0)
    logger.warn({ source: id, removed }, 'removed what an interrupted transfer left in the store');
  return true;
}

/**
 * The replicas' answer for a source this machine holds: Redis's lease and publication, or alone. A publication
 * older than the last time this replica resolved the source alone (Redis down, or a publication refused) is behind.
 */
async function replicasRole(
  coordination: Coordination | undefined,
  id: string,
  aloneAt: Map<string, number>,
  clock: Clock,
): Promise<Role> {
  if (coordination === undefined) return { kind: 'alone' };
  const verdict = await coordination.poll(id);
  const alone = () => void aloneAt.set(id, clock.now());
  if (verdict.kind === 'alone') {
    alone();
    return verdict;
  }
  if (verdict.kind === 'holder')
    return {
      kind: 'hold',
      publish: (published) => coordination.publish(id, verdict.token, published),
    };
  const { holder, refused, hint } = verdict;
  const since = aloneAt.get(id);
  return {
    kind: 'follow',
    via: 'replicas',
    holder,
    ...(hint === undefined ? {} : { hint }),
    behind: since !== undefined && hint !== undefined && hint.at < since,
    ...(refused === undefined ? {} : { refused }),
    refuse(refusal) {
      coordination.refused(id, refusal.reason);
      alone();
    },
  };
}

/**
 * The owner of a worker: the dataDir's lease decides among this machine's processes, and its holder asks Redis
 * (when configured) among the replicas. Watches what the other processes publish, ask and give up, and what the
 * replicas announce, and tells `triggered`.
 */
export function createOwner(options: OwnerOptions): Owner {
  const { membership, stateFile, coordination, triggered, clock } = options;
  /** When each source was last resolved by this replica alone: older publications are no hints. */
  const aloneAt = new Map<string, number>();
  const replicas = (id: string) => replicasRole(coordination, id, aloneAt, clock);
  const entryOf = async (id: string) => (await stateFile.read()).state.sources[id];
  const holdsHere = (id: string) => membership.holds(id);
  const events: CoordinationEvents = {
    // What the other replicas ask: the process on this dataDir that holds a source's lease syncs it.
    triggered(id, why) {
      if (holdsHere(id)) triggered(id, why);
    },
  };
  const watching = watchOthers(options);
  return {
    async role(source, store, asked) {
      const { id } = source;
      if (await leased(options, id, store)) return replicas(id);
      if (asked === undefined) return { kind: 'follow', via: 'machine', entry: await entryOf(id) };
      const before = (await entryOf(id))?.lastSync;
      await askSync(membership.dataDir, id, membership.holder, asked);
      const waited = await waitForPublication(
        () => entryOf(id),
        before,
        () => leased(options, id, store),
        options.askedWaitMs,
        source,
      );
      if (waited === 'taken') return replicas(id);
      const entry = await entryOf(id);
      if (waited === 'published') return { kind: 'follow', via: 'machine', entry };
      const holder = leaseHolder(membership.dataDir, membership.leaseOf(id));
      const late = `skillpin ${holder?.command ?? 'process'} (pid ${holder?.pid ?? '?'}) holds this source's lease and did not publish a sync in time`;
      return { kind: 'follow', via: 'machine', entry, late };
    },
    lease: (id, store) => leased(options, id, store),
    report: (served) => coordination?.report(served),
    replicas: coordination,
    announce: (id, why) => coordination?.announce(id, why),
    follow: (sources) => coordination?.follow(sources, events),
    async close() {
      watching.close();
      await coordination?.close();
    },
  };
}

/**
 * Watches the other processes on the dataDir: a publication triggers the sources whose state.json entry changed
 * (each serves what its holder published), an ask the sources this process holds, a lease given up the sources
 * a follower may take.
 */
function watchOthers(options: OwnerOptions): { close(): void } {
  const { membership, stateFile, triggered } = options;
  let seen = new Map<string, string>();
  const changed = async () => {
    const { state } = await stateFile.read();
    const before = seen;
    seen = new Map(Object.entries(state.sources).map(([id, entry]) => [id, JSON.stringify(entry)]));
    for (const id of new Set([...seen.keys(), ...before.keys()]))
      if (seen.get(id) !== before.get(id) && !membership.holds(id))
        triggered(id, 'published by another process');
  };
  return watchDataDir(membership.dataDir, {
    published: () => void changed(),
    asked(id) {
      if (membership.holds(id)) triggered(id, 'asked by another process');
    },
    freed(id) {
      if (!membership.holds(id)) triggered(id, 'lease given up');
    },
  });
}
