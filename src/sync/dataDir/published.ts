import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import path from 'node:path';
import type { Namespace } from '../../catalog/index.ts';
import type { SourceConfig } from '../../config/index.ts';
import { makeDirectorySync, writeFileAtomic } from '../../shared/fs.ts';
import type { Logger } from '../../shared/log.ts';
import type { SyncOutcome } from '../../shared/status.ts';
import type { Followed } from '../follower.ts';
import type { Holder } from './lease.ts';
import { leaseHolder } from './membership.ts';
import { commitsOf, leased, publish, record, type SourceRecord, type Worker } from '../served.ts';
import type { SourceState } from './state.ts';
import { failureOf } from '../step.ts';

// What the other processes on a dataDir publish, and what this one asks of them: the holder of a source's lease
// syncs it and publishes the result in state.json; the others watch for that and serve what it names.

/** How often the files are looked at when no watch event came (a filesystem that sends none). */
const PUBLICATION_POLL_MS = 1_000;

/** What another process on the dataDir did, as this one learns it. */
export interface DataDirEvents {
  /** state.json was replaced: a lease holder published a sync. */
  published(): void;
  /** A process asks the holder of source `id`'s lease to sync it now (a webhook, `skillpin sync`). */
  asked(id: string): void;
  /** Source `id`'s lease was given up: a follower may take it. */
  freed(id: string): void;
}

const triggersDir = (dataDir: string) => path.join(dataDir, 'triggers');
const leasesDir = (dataDir: string) => path.join(dataDir, 'leases');
const idOf = (name: string) => (name.endsWith('.json') ? name.slice(0, -'.json'.length) : undefined);

/** Asks the holder of source `id`'s lease to sync it now: `dataDir/triggers/<id>.json` is rewritten. */
function askSync(dataDir: string, id: string, holder: Holder, why: string): Promise<void> {
  const ask = { pid: holder.pid, host: holder.host, why, at: new Date().toISOString() };
  return writeFileAtomic(path.join(triggersDir(dataDir), `${id}.json`), `${JSON.stringify(ask)}\n`);
}

/** Modification times of the files a poll compares: state.json, the trigger files, and which leases exist. */
function snapshot(dataDir: string): Map<string, number> {
  const seen = new Map<string, number>();
  const stamp = (key: string, file: string) => {
    try {
      const stat = statSync(file);
      seen.set(key, stat.mtimeMs + stat.ino);
    } catch {
      // Not there: absent from the snapshot.
    }
  };
  stamp('state', path.join(dataDir, 'state.json'));
  for (const name of readdirSync(triggersDir(dataDir)))
    stamp(`asked:${name}`, path.join(triggersDir(dataDir), name));
  for (const name of readdirSync(leasesDir(dataDir)))
    if (idOf(name) !== undefined) seen.set(`lease:${name}`, 0);
  return seen;
}

/** Tells `events` what changed between two snapshots. */
function compare(before: Map<string, number>, now: Map<string, number>, events: DataDirEvents): void {
  if (now.get('state') !== before.get('state') && now.has('state')) events.published();
  for (const [key, stamp] of now) {
    const id = key.startsWith('asked:') ? idOf(key.slice('asked:'.length)) : undefined;
    if (id !== undefined && before.get(key) !== stamp) events.asked(id);
  }
  for (const key of before.keys()) {
    const id = key.startsWith('lease:') ? idOf(key.slice('lease:'.length)) : undefined;
    if (id !== undefined && !now.has(key)) events.freed(id);
  }
}

/**
 * Watches what the other processes on `dataDir` publish, ask and give up: fs.watch on the folders, and a look
 * at the files' times every PUBLICATION_POLL_MS in case a watch event never comes. Never keeps the process alive.
 */
export function watchDataDir(dataDir: string, events: DataDirEvents): { close(): void } {
  for (const dir of [triggersDir(dataDir), leasesDir(dataDir)]) makeDirectorySync(dir);
  let last = snapshot(dataDir);
  const look = () => {
    let now: Map<string, number>;
    try {
      now = snapshot(dataDir);
    } catch {
      return;
    }
    const before = last;
    last = now;
    compare(before, now, events);
  };
  const watchers: FSWatcher[] = [];
  for (const dir of [dataDir, triggersDir(dataDir), leasesDir(dataDir)]) {
    try {
      const watcher = watch(dir, { persistent: false }, () => look());
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    } catch {
      // No watch here (a filesystem without it): the poll alone tells.
    }
  }
  const timer = setInterval(look, PUBLICATION_POLL_MS);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** How long a process that asked the lease holder for a sync waits for its publication, at most. */
const ASKED_WAIT_MS = 10 * 60_000;
const LOOK_EVERY_MS = 50;

/**
 * Waits until the lease holder published a sync finished after `before` (the entry's `lastSync` when asked),
 * for up to `waitMs` (absent: the source's transfer deadline, or ASKED_WAIT_MS). `taken`: the holder went away
 * and `take` got the lease meanwhile (this process syncs then).
 */
async function waitForPublication(
  entry: () => Promise<SourceState | undefined>,
  before: string | undefined,
  take: () => Promise<boolean>,
  waitMs: number | undefined,
  config: Pick<SourceConfig, 'deadlineMs'>,
): Promise<'published' | 'taken' | 'timeout'> {
  const deadline = Date.now() + (waitMs ?? config.deadlineMs ?? ASKED_WAIT_MS);
  for (;;) {
    const now = (await entry())?.lastSync;
    if (now !== undefined && now !== before) return 'published';
    if (await take()) return 'taken';
    if (Date.now() >= deadline) return 'timeout';
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}

/** What this process serves of a source another process leases, once it read what that one published. */
interface Adopted {
  record: SourceRecord;
  outcome: SyncOutcome;
  /** Whether the served commits or the failure differ from `before` (a catalog swap is due). */
  changed: boolean;
}

/**
 * Serves what the lease holder published for a source (`entry`, its state.json entry): the commits it names,
 * from their index files (never the network), reusing the namespaces already served. A commit that cannot be
 * restored is logged and left out; nothing published yet is `source-pending`.
 */
async function adoptPublished(
  { source }: Followed,
  before: SourceRecord,
  entry: SourceState | undefined,
  logger: Logger,
): Promise<Adopted> {
  const { id } = source;
  if (entry?.current === undefined && entry?.lastError === undefined) {
    const failure = {
      id,
      reason: 'source-pending' as const,
      detail: 'another skillpin process on this dataDir syncs this source and has not published it yet',
    };
    const serving = before.served?.current.commit;
    return {
      record: { ...before, failure },
      outcome: { ...failure, ok: false, serving },
      changed: before.failure?.reason !== failure.reason,
    };
  }
  const have = new Map(
    before.served === undefined
      ? []
      : [before.served.current, ...before.served.retained].map((ns) => [ns.commit, ns]),
  );
  const restore = async (commit: string): Promise<Namespace | undefined> => {
    const known = have.get(commit);
    if (known !== undefined) return known;
    try {
      return await source.restore(commit);
    } catch (error) {
      logger.warn(
        { source: id, commit, reason: failureOf(id, error).reason },
        'a published commit could not be read',
      );
      return undefined;
    }
  };
  const current = entry.current === undefined ? undefined : await restore(entry.current);
  const retained: Namespace[] = [];
  for (const commit of entry.retained) {
    const ns = await restore(commit);
    if (ns !== undefined) retained.push(ns);
  }
  const served = current === undefined ? before.served : { id, current, retained };
  const failed = entry.lastError !== undefined && entry.lastError.at === entry.lastSync;
  const failure = failed
    ? { id, reason: entry.lastError!.reason, detail: entry.lastError!.detail }
    : undefined;
  const { lastSync, lastSuccess, lastError } = entry;
  const tried = before.tried || lastSync !== undefined;
  const record: SourceRecord = { tried, served, failure, lastSync, lastSuccess, lastError };
  const changed =
    commitsOf(record.served).join() !== commitsOf(before.served).join() ||
    before.failure?.reason !== failure?.reason;
  const serving = served?.current.commit;
  const outcome: SyncOutcome =
    failure === undefined && serving !== undefined
      ? { id, ok: true, commit: serving, changed: serving !== before.served?.current.commit }
      : {
          id,
          ok: false,
          reason: failure?.reason ?? 'source-pending',
          detail: failure?.detail ?? 'a published commit could not be read',
          serving,
        };
  return { record, outcome, changed };
}

const entryOf = async (w: Worker, id: string): Promise<SourceState | undefined> =>
  (await w.stateFile.read()).state.sources[id];

/** Serves what another process published of `followed`; one swap when it differs from what is served. */
export async function adopt(w: Worker, followed: Followed): Promise<SyncOutcome> {
  const { id } = followed.config;
  const done = await adoptPublished(followed, w.records.get(id)!, await entryOf(w, id), w.logger);
  record(w, id, done.record);
  if (done.changed) publish(w);
  return done.outcome;
}

/**
 * Asks the holder of `followed`'s lease to sync it (a webhook, `skillpin sync`) and serves what it publishes;
 * `taken`: the holder went away and this process took the lease meanwhile (it syncs then).
 */
export async function askHolder(w: Worker, followed: Followed, why: string): Promise<SyncOutcome | 'taken'> {
  const { id } = followed.config;
  const before = (await entryOf(w, id))?.lastSync;
  await askSync(w.membership.dataDir, id, w.membership.holder, why);
  const waited = await waitForPublication(
    () => entryOf(w, id),
    before,
    () => leased(w, followed),
    w.askedWaitMs,
    followed.config,
  );
  if (waited === 'taken') return 'taken';
  if (waited === 'published') return adopt(w, followed);
  // The holder did not publish in time: what is served stays, and the outcome says so.
  const outcome = await adopt(w, followed);
  if (!outcome.ok && outcome.reason !== 'source-pending') return outcome;
  const holder = leaseHolder(w.membership.dataDir, id);
  return {
    id,
    ok: false,
    reason: 'source-pending',
    detail: `skillpin ${holder?.command ?? 'process'} (pid ${holder?.pid ?? '?'}) holds this source's lease and did not publish a sync in time`,
    serving: w.records.get(id)!.served?.current.commit,
  };
}
