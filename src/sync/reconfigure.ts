import { isDeepStrictEqual } from 'node:util';
import type { Config, SourceConfig } from '../config/index.ts';
import { type Followed, unfollow } from './follower.ts';
import { EMPTY_LISTING, expandedSources, type GroupListing, isRefsSource } from './refGroup.ts';
import { restartedRecord } from './restore.ts';
import type { SyncOutcome } from '../shared/status.ts';
import {
  listingOf,
  lists,
  persist,
  publish,
  rebase,
  type Restored,
  restarted,
  runs,
  type Worker,
} from './served.ts';

/** What a reconfigure does, by source id. */
export interface Reconfigured {
  added: string[];
  removed: string[];
  changed: string[];
}

/** The sources `next` adds, removes and changes (any setting of theirs differs) against those `running`. */
export function sourceChanges(running: readonly SourceConfig[], next: readonly SourceConfig[]): Reconfigured {
  const known = new Map(running.map((source) => [source.id, source]));
  return {
    added: next.filter((s) => !known.has(s.id)).map((s) => s.id),
    removed: running.filter((s) => !next.some((n) => n.id === s.id)).map((s) => s.id),
    changed: next.filter((s) => known.has(s.id) && !isDeepStrictEqual(known.get(s.id), s)).map((s) => s.id),
  };
}

/** Serves `next` instead of the config the worker runs (see SyncWorker.reconfigure). */
export function reconfigure(w: Worker, next: Config): Promise<Reconfigured> {
  rebase(
    w,
    next,
    new Map([...w.listings].filter(([id]) => next.sources.some((s) => s.id === id && isRefsSource(s)))),
  );
  return apply(w, expanded(w));
}

/** The config to run: the base with the sources of each `refs:` source's refs after it. */
export const expanded = (w: Worker): Config => ({
  ...w.base,
  sources: expandedSources(w.base.sources, w.listings),
});

/** Starts and stops the refs' sources to match what each `refs:` source listed last; one catalog swap. */
export async function applyListings(w: Worker): Promise<void> {
  lists(w, new Map(w.base.sources.filter(isRefsSource).map((s) => [s.id, listingOf(w, s.id)])));
  // Refs added, removed or their settings changed: their sources start and stop; else the order may move.
  if (isDeepStrictEqual(expanded(w).sources, w.running.config.sources)) publish(w);
  else await apply(w, expanded(w));
}

/** Each `refs:` source's refs as it listed them last (state.json): their sources start without the network. */
export function restoreListings(
  w: Worker,
  saved: Readonly<Record<string, { listing?: GroupListing }>>,
): void {
  lists(
    w,
    new Map(w.base.sources.filter(isRefsSource).map((s) => [s.id, saved[s.id]?.listing ?? EMPTY_LISTING])),
  );
}

/**
 * Runs `next`: removed and changed sources stop, added and changed ones start from what they served while their
 * repository is the same; one catalog swap, state.json written, and what stopped being served forgotten. The
 * added and changed sources' first syncs follow.
 */
async function apply(w: Worker, next: Config): Promise<Reconfigured> {
  const { membership } = w;
  membership.reconfigure(next);
  const was = w.running;
  const changes = sourceChanges(was.config.sources, next.sources);
  const starting = await restart(w, next, changes);
  w.queue.concurrency = next.sync.concurrency;
  w.owner.follow(next.sources);
  const removed = changes.removed.map((id) => was.followed.get(id)!);
  restarted(w, next.sources, starting, removed);
  publish(w);
  // What the changed sources and the removed refs stopped serving is forgotten once state.json is written.
  const changed = changes.changed.map((id) => w.running.followed.get(id)!);
  await persist(w, [...changed, ...removed.filter((f) => f.config.group !== undefined)], changes.removed);
  for (const id of changes.removed) membership.release(id);
  void syncAll(w, 'reload', (source) => starting.has(source.id));
  return changes;
}

/**
 * Stops the sources `changes` removes and changes (a running sync lands first: a stopped follower starts none),
 * follows the added and changed ones anew, and says what each of those starts from.
 */
async function restart(w: Worker, next: Config, changes: Reconfigured): Promise<Map<string, Restored>> {
  const was = w.running;
  const { added, removed, changed } = changes;
  await unfollow([...removed, ...changed].map((id) => was.followed.get(id)!));
  const ids = new Set([...added, ...changed]);
  const followed = new Map<string, Followed>(
    next.sources.map((s) => [s.id, ids.has(s.id) ? w.follow(s, next) : was.followed.get(s.id)!]),
  );
  const starting = new Map<string, Restored>();
  for (const id of ids) {
    const before = { config: was.followed.get(id)?.config, served: w.records.get(id)?.served };
    starting.set(id, await restartedRecord(followed.get(id)!, before, w.logger));
  }
  runs(w, { config: next, followed });
  return starting;
}

/** Why a server's first sync of each source runs (serve.ts). */
export const START_SYNC = 'start';

/**
 * Syncs the sources `which` selects (default all) now; the refs of a `refs:` source are synced by its sync. The
 * syncs of a start that found what dataDir served are written to state.json at once when the last of them ends.
 */
export async function syncAll(
  w: Worker,
  why: string,
  which: (source: SourceConfig) => boolean = () => true,
): Promise<SyncOutcome[]> {
  const { config, followed } = w.running;
  // Locked refs run without their `refs:` source: synced on their own.
  const chosen = config.sources.filter(
    (source) => (source.group === undefined || !followed.has(source.group.id)) && which(source),
  );
  // `skillpin sync` asks for a sync of every source; a server's start serves what the holders publish.
  if (w.membership.role.command === 'sync') for (const source of chosen) w.asked.add(source.id);
  const outcomes = await Promise.all(
    chosen.flatMap((source) => followed.get(source.id)!.follower.trigger(why) ?? []),
  );
  if (w.unwritten.size > 0 && !w.stopped) {
    const touched = [...w.unwritten];
    w.unwritten.clear();
    await persist(w, touched);
  }
  return outcomes;
}
