import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import PQueue from 'p-queue';
import type { Catalog } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { osReason, type WriteFs } from '../shared/fs.ts';
import type { Logger } from '../shared/log.ts';
import { batched, oneAtATimePer } from '../shared/serial.ts';
import type { StatusReport, SyncOutcome } from '../shared/status.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { Coordination } from './coordination/coordination.ts';
import { createDamageLedger, type Damage } from './damage.ts';
import { type Followed, type FollowHooks, followSource, unfollow } from './follower.ts';
import { heldCommits } from './held.ts';
import { listByRole, publishedListing, resolvedOf } from './groupStep.ts';
import { joinDataDir, type Membership } from './dataDir/membership.ts';
import { leasedByGroup } from './dataDir/groupLease.ts';
import { adoptPublished } from './adopt.ts';
import { createOwner, type Role } from './owner.ts';
import {
  applyListings,
  expanded,
  type Reconfigured,
  reconfigure,
  restoreListings,
  START_SYNC,
  syncAll,
} from './reconfigure.ts';
import { EMPTY_LISTING, isRefsSource } from './refGroup.ts';
import { lastState, restoredRecord } from './restore.ts';
import { createRetention } from './retention.ts';
import {
  commitsOf,
  listingOf,
  persist,
  persistAll,
  publish,
  quietPoll,
  record,
  restarted,
  runs,
  servesAsBefore,
  siblingsServe,
  stops,
  type Worker,
} from './served.ts';
import { type RepositoryOnUse, repositoryOnUse, storeDirOf, usedBy } from './source.ts';
import { openStateFile } from './dataDir/state.ts';
import { liveStatusOf, statusReportOf } from './status.ts';
import { syncSource } from './step.ts';
import { syncByRole } from './target.ts';

export type { Reconfigured } from './reconfigure.ts';
export { START_SYNC } from './reconfigure.ts';

export interface SyncWorkerOptions extends FollowHooks {
  config: Config;
  catalog: Catalog;
  logger: Logger;
  /** Told after every sync how long it ran, waiting for its turn not counted (metrics). */
  onSynced?: (outcome: SyncOutcome, seconds: number) => void;
  clock?: Clock;
  /** File operations for state.json (tests make them fail like a full disk). */
  fs?: WriteFs;
  /**
   * This process on the dataDir (its process file and source leases), given up when the worker stops; absent:
   * the worker joins as a `serve`. A `sync` asks the lease holders of sources it does not lease to sync them.
   */
  membership?: Membership;
  /** How long a sync asked of another process's lease waits for its publication (`skillpin sync --wait`). */
  askedWaitMs?: number;
  /**
   * Replicas on other machines (Redis): one polls each source and publishes what it resolves, a webhook at one
   * reaches all. Closed when the worker stops. Absent: this process follows its sources on its own.
   */
  coordination?: Coordination;
}

export interface SyncWorker {
  /** Serves what dataDir holds, without the network; a lost state.json is rebuilt from the index files and pins. */
  restore(): Promise<void>;
  /** Syncs the sources `which` selects (default all) now; afterwards each polls and retries on its own. */
  syncAll(why: string, which?: (source: SourceConfig) => boolean): Promise<SyncOutcome[]>;
  /** Syncs one source now, merged with a sync of it that is running. `undefined` for an unknown id or once stopped. */
  trigger(id: string, why: string): Promise<SyncOutcome> | undefined;
  /** The live status of every source. */
  status(): StatusReport;
  /** Ids of the sources no sync has finished for since this worker started. */
  pending(): string[];
  /**
   * Serves `next` instead of the config it runs: added sources start, removed ones stop (their retained commits stop
   * serving too), changed ones restart (keeping what they served while their repository is the same); one catalog
   * swap. Resolves once swapped; the added and changed sources' first syncs follow. Calls are applied one at a time.
   */
  reconfigure(next: Config): Promise<Reconfigured>;
  /**
   * Stops polls and retries and ends every git process of every source, so a running sync (a hanging remote
   * included) ends at once; what a sync ends with after this is not recorded (the next start redoes it).
   */
  stop(): Promise<void>;
}

/**
 * The sync worker wires, per source, a follower (when to sync), the source object (how), retention (what
 * stays) to state.json (what is remembered) and the catalog (what is served). A failure costs only its source,
 * and the last good commit keeps serving. One sync reads top to bottom: `sync` here (where it runs), `syncHere`
 * in step.ts (the step), source.ts (git and the index), landing in served.ts (record, publish, persist).
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const w = workerOf(options);
  w.owner.follow(options.config.sources);
  let reconfiguring: Promise<unknown> = Promise.resolve();
  return {
    restore: () => restore(w),
    syncAll: (why, which) => syncAll(w, why, which),
    trigger(id, why) {
      const followed = w.running.followed.get(id);
      if (followed === undefined) return undefined;
      w.asked.add(id);
      // Asked here (a webhook, `skillpin sync`): asked of every replica.
      w.owner.announce(id, why);
      return followed.follower.trigger(why);
    },
    reconfigure(next) {
      const done = reconfiguring.then(() => reconfigure(w, next));
      reconfiguring = done.catch(() => undefined);
      return done;
    },
    status: () => status(w),
    pending: () => pending(w),
    async stop() {
      await reconfiguring;
      stops(w);
      await unfollow([...w.running.followed.values()], { now: true });
      await w.owner.close();
      w.membership.leave();
    },
  };
}

/** The worker's state at its start: every source followed, none tried. */
function workerOf(options: SyncWorkerOptions): Worker {
  const { logger, config } = options;
  // dataDir is the one setting a reconfigure cannot change: this process's file and leases are there.
  const membership = leasedByGroup(
    options.membership ?? joinDataDir(config, { command: 'serve' }, logger),
    // A ref's source runs with its `refs:` source's id (its followers are the running config's).
    (id) => w.running.followed.get(id)?.config.group?.id,
  );
  const stores = new Map<string, RepositoryOnUse>();
  const locals: LocalRepositories = new Map();
  const held = heldCommits();
  const clock = options.clock ?? systemClock;
  const stateFile = openStateFile(membership.dataDir, options.fs);
  const w: Worker = {
    catalog: options.catalog,
    logger,
    clock,
    membership,
    owner: createOwner({
      membership,
      stateFile,
      coordination: options.coordination,
      logger,
      clock,
      askedWaitMs: options.askedWaitMs,
      triggered: (id, why) => void w.running.followed.get(id)?.follower.trigger(why),
    }),
    stateFile,
    queue: new PQueue({ concurrency: config.sync.concurrency }),
    storeTurn: oneAtATimePer(),
    damage: createDamageLedger(),
    retention: createRetention({
      logger,
      holds: (id) => membership.holds(id),
      serving: (id) => new Set(commitsOf(w.records.get(id)?.served)),
      elsewhere: (followed) =>
        new Set([...membership.servedElsewhere(followed.config.id), ...siblingsServe(w, followed)]),
    }),
    persisting: batched((asks) => persistAll(w, asks)),
    onSynced: options.onSynced,
    asked: new Set(),
    rounds: new Set(),
    unwritten: new Set(),
    follow: (source, running) =>
      followSource(source, running, {
        dataDir: membership.dataDir,
        clock: w.clock,
        sync: (followed, why, since) => sync(w, followed, why, since),
        onDamage: (id, found) => reportDamage(w, id, found),
        onRefused: (id, error) =>
          w.logger.warn(
            { source: id, file: error.file, reason: error.reason },
            `an index file is damaged and rebuilt from git: ${error.message}`,
          ),
        onSearchUnsaved: (id, error) =>
          w.logger.warn(
            { source: id },
            `a search index could not be saved in dataDir (it is built again at the next start): ${osReason(error)}`,
          ),
        hooks: options,
        shared: (sourceConfig) => sharedStore(w, stores, sourceConfig) ?? sharedLocal(locals, sourceConfig),
        held,
      }),
    records: new Map(config.sources.map((s) => [s.id, { tried: false }])),
    listings: new Map(),
    running: { config, followed: new Map() },
    base: config,
    stopped: false,
    written: 0,
  };
  runs(w, { config, followed: new Map(config.sources.map((s) => [s.id, w.follow(s, config)])) });
  return w;
}

/**
 * One sync of a source, as its owner answers who syncs it: this process (alone, or holding it and publishing),
 * another process of this machine (what it published in state.json is served), or another replica (what it
 * published is fetched). Asked for (webhook, `skillpin sync`), a holder on this machine is asked and awaited.
 */
async function sync(w: Worker, followed: Followed, why: string, since: number): Promise<SyncOutcome> {
  const { config, source } = followed;
  const asked = w.asked.delete(config.id) ? why : undefined;
  const role = await w.owner.role(config, source, asked);
  // Asked of a replica that follows another, the refs sync as that replica's publication says: what is new.
  const confirmAll = asked !== undefined && !(role.kind === 'follow' && role.via === 'replicas');
  if (isRefsSource(config)) return listed(w, followed, why, role, confirmAll, since);
  if (role.kind === 'follow' && role.via === 'machine') {
    const done = await adoptPublished(source, w.records.get(config.id)!, role.entry, w.logger, role.late);
    record(w, config.id, done.record);
    if (done.changed) publish(w);
    return done.outcome;
  }
  return synced(w, followed, why, role, since);
}

/**
 * One sync of a source by this process, in its turn: its target as `role` gives it, then repaired, fetched,
 * indexed and retained (`syncSource`); then recorded, served and written to state.json, which lets retention forget
 * what it dropped.
 */
async function synced(
  w: Worker,
  followed: Followed,
  why: string,
  role: Exclude<Role, { via: 'machine' }>,
  since: number,
) {
  const { source, config } = followed;
  const { id, keep, group } = config;
  const { logger } = w;
  const at = () => new Date(w.clock.now()).toISOString();
  const before = () => w.records.get(id)!;
  const step = await inTurn(
    w,
    () =>
      syncByRole(
        role,
        config,
        () => source.resolve(since),
        (resolve, accept) =>
          syncSource(source, before(), {
            keep,
            why,
            at,
            logger,
            damaged: w.damage.of(id),
            resolve,
            accept,
            since,
            stopping: () => w.stopped,
          }),
        {
          logger,
          serving: before().served?.current.commit,
          movedFrom: before().served?.retained.map((ns) => ns.commit) ?? [],
        },
      ),
    // The refs of one `refs:` source fetch into one store, one at a time.
    group?.id,
  );
  if (w.stopped) return step.outcome;
  const was = before();
  record(w, id, step.record, step.dropped);
  w.damage.repaired(id, step.repaired);
  // A ref synced by its source's listing is served and written by the listing (`listed`).
  if (group !== undefined && w.rounds.has(group.id)) return step.outcome;
  if (!servesAsBefore(was, step.record)) publish(w);
  // A sync that found what was served swaps in nothing (most polls, and a restart's first sync of each source); at
  // a start, its new sync times go to state.json with the others', once the start's syncs end.
  else if (why === START_SYNC) {
    w.unwritten.add(followed);
    return step.outcome;
  }
  await persist(w, [followed]);
  return step.outcome;
}

/**
 * One sync of a `refs:` source: one listing of its refs (by whoever `role` says; a process of this machine that
 * does not hold it serves what the holder published), the refs' sources started and stopped to match, then each ref
 * synced in turn.
 */
async function listed(
  w: Worker,
  followed: Followed,
  why: string,
  role: Role,
  confirmAll: boolean,
  since: number,
): Promise<SyncOutcome> {
  const { config, source } = followed;
  const { id } = config;
  const before = w.records.get(id)!;
  const taken = new Set(w.running.config.sources.filter((s) => s.group?.id !== id).map((s) => s.id));
  const at = () => new Date(w.clock.now()).toISOString();
  const step =
    role.kind === 'follow' && role.via === 'machine'
      ? publishedListing(id, before, role.entry)
      : await inTurn(w, () =>
          listByRole(role, source, config, before, {
            why,
            at,
            logger: w.logger,
            taken,
            chosen: followed.chosen,
          }),
        );
  if (w.stopped) return step.outcome;
  record(w, id, step.record);
  // The refs' sources start and stop when the listing changed, or differs from the one they run (a reconfigure
  // restarted the source without its listing); a poll with nothing new swaps nothing (only a failure that came or
  // went is served: status says it).
  const running = w.listings.get(id) ?? EMPTY_LISTING;
  if (step.changed || !isDeepStrictEqual(listingOf(w, id), running)) await applyListings(w);
  else if (before.failure?.reason !== step.record.failure?.reason) publish(w);
  // A poll that found nothing new writes no state.json (its sync times there lag up to QUIET_WRITE_MS).
  if (!quietPoll(w, why, before, step.record)) await persist(w, [followed]);
  // Each ref whose commit is not served yet syncs in turn (all of them when asked here); one that fails reports on its
  // own line (status, skillpin sync) and retries with its source's next listing, which keeps its poll: a broken
  // tag never slows how soon a new one is served. A ref that serves what the listing names costs nothing. What one
  // ref fetched and checked since this sync began is every other ref's of that commit: each commit once.
  const refs = [...listingOf(w, id).refs, ...listingOf(w, id).gone];
  const synced: Followed[] = [];
  w.rounds.add(id);
  try {
    for (const [i, ref] of refs.entries()) {
      const was = w.records.get(ref.id);
      const current =
        was?.tried === true && was.failure === undefined && was.served?.current.commit === ref.commit;
      const ofRef = w.running.followed.get(ref.id);
      if (ofRef === undefined || (current && !confirmAll)) continue;
      await ofRef.follower.trigger(why, since);
      synced.push(ofRef);
      // The refs of one commit are served in one catalog swap, once the last of them synced.
      if (!w.stopped && refs[i + 1]?.commit !== ref.commit) publish(w);
    }
  } finally {
    w.rounds.delete(id);
  }
  if (w.stopped || synced.length === 0) return step.outcome;
  publish(w);
  await persist(w, synced);
  return step.outcome;
}

/**
 * Runs `step` in its turn in the worker's queue (and after every earlier step of the same `store`), and tells
 * `onSynced` how long it ran, in seconds: waiting for its turn is not counted.
 */
async function inTurn<T extends { outcome: SyncOutcome }>(w: Worker, step: () => Promise<T>, store?: string) {
  const timed = async () => {
    const started = performance.now();
    const done = await step();
    w.onSynced?.(done.outcome, (performance.now() - started) / 1000);
    return done;
  };
  const turn = async () => (await w.queue.add(timed))!;
  return store === undefined ? turn() : w.storeTurn(store, turn);
}

/**
 * The sources no sync has finished for: those not tried, and the refs a `refs:` source listed whose sources have
 * not been tried yet (started or not): a listed ref is pending until its namespace is served or its failure said.
 */
function pending(w: Worker): string[] {
  const untried = (id: string) => w.records.get(id)?.tried !== true;
  const listed = w.base.sources
    .filter(isRefsSource)
    .flatMap((s) => listingOf(w, s.id).refs.map((ref) => ref.id));
  return [...new Set([...[...w.records.keys()].filter(untried), ...listed.filter(untried)])];
}

/** A read found a served commit damaged: reported at once, and a sync repairs it. */
function reportDamage(w: Worker, id: string, found: Damage): void {
  if (!w.damage.report(id, found, new Date(w.clock.now()).toISOString())) return;
  w.logger.warn({ source: id, commit: found.commit, kind: found.kind, log: found.log }, found.detail);
  publish(w);
  // Repaired under the lease: by this process, or asked of the one that holds it.
  w.asked.add(id);
  void w.running.followed.get(id)?.follower.trigger('store damaged');
}

/**
 * The store a `refs:` source shares with its refs (opened by the source, or, served from a lockfile without it,
 * by its first ref), and what each ref names at the source's last listing; `undefined` for a source of its own.
 */
function sharedStore(w: Worker, stores: Map<string, RepositoryOnUse>, source: SourceConfig) {
  const dataDir = w.membership.dataDir;
  if (isRefsSource(source)) {
    const repository = repositoryOnUse(source, storeDirOf(dataDir, source));
    stores.set(source.id, repository);
    return { repository };
  }
  const { group } = source;
  if (group === undefined) return undefined;
  if (!stores.has(group.id)) stores.set(group.id, repositoryOnUse(source, storeDirOf(dataDir, source)));
  return {
    repository: stores.get(group.id)!,
    listed: (ref: string) => resolvedOf(listingOf(w, group.id), ref),
  };
}

/** The local repositories sources of the worker read, by path and git settings, and the sources using each. */
type LocalRepositories = Map<string, { repository: RepositoryOnUse; users: Set<object> }>;

/**
 * The repository of a local source, shared by every source of the worker reading the same one with the same git
 * settings: opened once (one object reader, one tree cache), and its ref resolved and a commit's objects checked once
 * for the sources asked to sync at once (RepositoryOnUse.fresh). `undefined` for a remote source.
 */
function sharedLocal(locals: LocalRepositories, source: SourceConfig) {
  const { location } = source;
  if (location.kind !== 'local') return undefined;
  const key = JSON.stringify([path.resolve(location.path), location.given ?? null, source.git]);
  let known = locals.get(key);
  if (known === undefined)
    locals.set(key, (known = { repository: repositoryOnUse(source, ''), users: new Set() }));
  return { repository: usedBy(known.repository, known.users) };
}

/** Serves what dataDir holds, without the network (see SyncWorker.restore). */
async function restore(w: Worker): Promise<void> {
  // Leases first: a source this process will write is swept before its store is read.
  for (const followed of w.running.followed.values())
    await w.owner.lease(followed.config.id, followed.source);
  const { sources } = await lastState(w.stateFile, w.logger);
  restoreListings(w, sources);
  const next = expanded(w);
  const was = w.running.followed;
  runs(w, {
    config: next,
    followed: new Map(next.sources.map((s) => [s.id, was.get(s.id) ?? w.follow(s, next)])),
  });
  restarted(w, next.sources, new Map(), []);
  w.membership.reconfigure(next);
  for (const followed of w.running.followed.values())
    await w.owner.lease(followed.config.id, followed.source);
  for (const followed of w.running.followed.values()) {
    const restored = await restoredRecord(followed, sources[followed.source.id], w.logger);
    record(w, followed.source.id, restored.record, restored.dropped);
  }
  publish(w);
}

/** The live status of every source, with what the replicas serve when they coordinate. */
function status(w: Worker): StatusReport {
  const { records, damage } = w;
  const coordination = w.owner.replicas;
  const of = (followed: Followed) => liveStatusOf(followed, records.get(followed.source.id)!, damage);
  const report = statusReportOf([...w.running.followed.values()].map(of));
  if (coordination === undefined) return report;
  const sources = report.sources.map((source) => {
    const replicas = coordination.replicas(source.id);
    return replicas === undefined ? source : { ...source, replicas };
  });
  return { ...report, sources, coordination: coordination.status() };
}
