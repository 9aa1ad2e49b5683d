import { type FSWatcher, readdirSync, statSync, watch } from 'node:fs';
import path from 'node:path';
import type { SourceConfig } from '../../config/index.ts';
import { makeDirectorySync, writeFileAtomic } from '../../shared/fs.ts';
import type { Holder } from './lease.ts';
import type { SourceState } from './state.ts';

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
export function askSync(dataDir: string, id: string, holder: Holder, why: string): Promise<void> {
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
  // A burst of events (every lease file touched at a renewal, a write's rename) is one look, once it is over.
  let looking: NodeJS.Immediate | undefined;
  const lookSoon = () => {
    looking ??= setImmediate(() => {
      looking = undefined;
      look();
    }).unref();
  };
  const watchers: FSWatcher[] = [];
  for (const dir of [dataDir, triggersDir(dataDir), leasesDir(dataDir)]) {
    try {
      const watcher = watch(dir, { persistent: false }, lookSoon);
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
      if (looking !== undefined) clearImmediate(looking);
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
export async function waitForPublication(
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
