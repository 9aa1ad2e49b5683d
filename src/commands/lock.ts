import { readFileSync } from 'node:fs';
import type { SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { writeFileAtomic } from '../shared/fs.ts';
import { plural } from '../shared/text.ts';
import {
  type LockedSource,
  type Lockfile,
  lockedSourceOf,
  lockfilePath,
  lockMismatch,
  readLockfile,
  renderLockfile,
} from '../sync/lockfile.ts';
import { type SourceDiff, sourceDiff } from './diffReport.ts';
import { eachSource, loadAt, withScratch } from './pinning.ts';

/** What re-resolving the lock found. */
export interface Relocked {
  file: string;
  /** The lockfile's text before, `undefined` when there was none. */
  before?: string;
  lock: Lockfile;
  /** The sources whose entry changed (moved, added, removed), in config order, removed ones last. */
  diffs: SourceDiff[];
  failures: SourceFailure[];
}

function previousLock(file: string): { text?: string; lock: Lockfile } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { lock: { version: 1, sources: [] } };
  }
  return { text, lock: readLockfile(file) };
}

/** One end of a source's diff, as the lockfile recorded it. */
const lockedEnd = (entry: LockedSource) => ({
  commit: entry.commit,
  commitTime: entry.commitTime,
  signer: entry.signer ?? null,
});

/** When the locked commit cannot be loaded any more (force-pushed away), skills compare by their locked digests. */
function summaryDiff(before: LockedSource, after: LockedSource): SourceDiff {
  const old = new Map(before.skills.map((skill) => [skill.path, skill]));
  const now = new Map(after.skills.map((skill) => [skill.path, skill]));
  const changed = after.skills.flatMap((skill) => {
    const was = old.get(skill.path);
    if (was === undefined || was.digest === skill.digest) return [];
    const { path, ...to } = skill;
    const { path: _path, ...from } = was;
    return [{ path, from, to, files: { added: [], removed: [], changed: [] } }];
  });
  const added = after.skills.filter((skill) => !old.has(skill.path));
  const removed = before.skills.filter((skill) => !now.has(skill.path));
  return {
    source: after.id,
    repository: after.repository,
    from: lockedEnd(before),
    to: lockedEnd(after),
    skills: { added, removed, changed, unchanged: after.skills.length - added.length - changed.length },
    problems: { introduced: [], resolved: [] },
  };
}

/** A source that left the config: every skill it locked is removed. */
const removal = (entry: LockedSource): SourceDiff => ({
  source: entry.id,
  repository: entry.repository,
  from: lockedEnd(entry),
  to: null,
  skills: { added: [], removed: entry.skills, changed: [], unchanged: 0 },
  problems: { introduced: [], resolved: [] },
});

/**
 * Re-resolves the sources `chosen` selects (and any the lockfile no longer describes), each in a private
 * dataDir, and builds the new lockfile; the others keep their entries. Nothing is written here.
 */
export async function relock(
  config: Config,
  chosen: (source: SourceConfig) => boolean,
  options: { ignorePrevious?: boolean } = {},
): Promise<Relocked> {
  const file = lockfilePath(config);
  const previous = options.ignorePrevious
    ? { lock: { version: 1 as const, sources: [] } }
    : previousLock(file);
  const entries = new Map(previous.lock.sources.map((entry) => [entry.id, entry]));
  const results = await withScratch((dataDir) =>
    eachSource(config.sources, config.sync.concurrency, async (source) => {
      const old = entries.get(source.id);
      if (!chosen(source) && lockMismatch(source, old) === undefined) return { entry: old! };
      const now = await loadAt(source, 'resolve', dataDir);
      if (!now.ok) return { failure: now.failure };
      const entry = lockedSourceOf(source, now.index);
      if (old?.repository === entry.repository && old.commit === entry.commit) return { entry };
      if (old === undefined || old.repository !== entry.repository)
        return { entry, diff: sourceDiff(source.id, entry.repository, undefined, { index: now.index }) };
      // The old end is what was locked: loaded as it was, its signer as the lockfile recorded it.
      const { verify: _keys, ...unverified } = source;
      const before = await loadAt(unverified, { commit: old.commit }, dataDir);
      if (!before.ok) return { entry, diff: summaryDiff(old, entry) };
      const from = { index: before.index, ...(old.signer === undefined ? {} : { signer: old.signer }) };
      return { entry, diff: sourceDiff(source.id, entry.repository, from, { index: now.index }) };
    }),
  );
  const configured = new Set(config.sources.map((source) => source.id));
  const removed = previous.lock.sources.filter((entry) => !configured.has(entry.id)).map(removal);
  return {
    file,
    ...(previous.text === undefined ? {} : { before: previous.text }),
    lock: { version: 1, sources: results.flatMap((r) => (r.entry === undefined ? [] : [r.entry])) },
    diffs: [...results.flatMap((r) => (r.diff === undefined ? [] : [r.diff])), ...removed],
    failures: results.flatMap((r) => (r.failure === undefined ? [] : [r.failure])),
  };
}

export const LOCK_EXIT = { ok: 0, failed: 2 } as const;

export function reportFailures(failures: readonly SourceFailure[], err: (text: string) => void): void {
  for (const failure of failures) err(`${failure.id}: FAILED ${failure.reason}: ${failure.detail}\n`);
}

/** `skillpin lock`: resolves every source and writes the lockfile; exit 2 (nothing written) when one fails. */
export async function lock(config: Config, io: { out: (text: string) => void; err: (text: string) => void }) {
  // Every source is resolved afresh: whatever the old lockfile holds (even a corrupt one) is replaced.
  const result = await relock(config, () => true, { ignorePrevious: true });
  if (result.failures.length > 0) {
    reportFailures(result.failures, io.err);
    io.err(`skillpin lock: ${result.file} not written\n`);
    return LOCK_EXIT.failed;
  }
  await writeFileAtomic(result.file, renderLockfile(result.lock));
  for (const entry of result.lock.sources)
    io.out(`${entry.id}: ${entry.commit} (${plural(entry.skills.length, 'skill')})\n`);
  io.out(`wrote ${result.file}\n`);
  return LOCK_EXIT.ok;
}
