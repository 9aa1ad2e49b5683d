import { readFileSync } from 'node:fs';
import type { SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import {
  type LockedSource,
  type Lockfile,
  lockedSourceOf,
  lockfilePath,
  lockMismatch,
  readLockfile,
} from './lockfile.ts';
import type { ResolvedRef } from '../git/index.ts';
import type { SkillProblem } from '../shared/reasons.ts';
import { oneAtATimePer } from '../shared/serial.ts';
import { resolvedOf } from '../sync/groupStep.ts';
import { chooseRefs, isRefsSource, refSourceConfig } from '../sync/refGroup.ts';
import { openSource } from '../sync/source.ts';
import { failureOf } from '../sync/failure.ts';
import { type SourceDiff, sourceDiff } from './diffReport.ts';
import { eachSource, loadAt } from './pinning.ts';
import { withScratch } from './scratch.ts';

/** What re-resolving the lock found. */
export interface Relocked {
  file: string;
  /** The lockfile's text before, `undefined` when there was none. */
  before?: string;
  lock: Lockfile;
  /** The sources whose entry changed (moved, added, removed), in config order, removed ones last. */
  diffs: SourceDiff[];
  failures: SourceFailure[];
  /** Refs of `refs:` sources that matched and are not locked (an id taken twice, past maxRefs), by source. */
  refused: Array<{ source: string; problem: SkillProblem }>;
}

/** The sources a lockfile pins: each `refs:` source as the sources of its refs, with what each ref names. */
interface LockPlan {
  sources: SourceConfig[];
  /** What each ref of a listed `refs:` source names, by the ref's source id (listed once for all of them). */
  targets: Map<string, ResolvedRef>;
  failures: SourceFailure[];
  refused: Relocked['refused'];
}

/**
 * `config`'s sources with each `refs:` source replaced by its refs: listed now (one listing) when `chosen` or
 * when the lockfile pins none of them, else the refs the lockfile pins.
 */
async function lockPlan(
  config: Config,
  chosen: (source: SourceConfig) => boolean,
  previous: readonly LockedSource[],
  dataDir: string,
): Promise<LockPlan> {
  const plan: LockPlan = { sources: [], targets: new Map(), failures: [], refused: [] };
  const taken = new Set(config.sources.map((source) => source.id));
  for (const source of config.sources) {
    if (!isRefsSource(source)) {
      plan.sources.push(source);
      continue;
    }
    const locked = previous.filter((entry) => entry.group === source.id);
    if (!chosen(source) && locked.length > 0) {
      for (const entry of locked)
        plan.sources.push(
          refSourceConfig(source, { name: entry.ref ?? '', id: entry.id, commit: entry.commit }),
        );
      continue;
    }
    const opened = openSource(source, { dataDir });
    try {
      const served = locked.flatMap((entry) =>
        entry.ref === undefined ? [] : [{ name: entry.ref, id: entry.id }],
      );
      const listing = { ...chooseRefs(source, await opened.listRefs(), taken, served), gone: [] };
      for (const problem of listing.problems) plan.refused.push({ source: source.id, problem });
      for (const ref of listing.refs) {
        plan.sources.push(refSourceConfig(source, ref));
        plan.targets.set(ref.id, resolvedOf(listing, ref.name)!);
      }
    } catch (error) {
      plan.failures.push(failureOf(source.id, error));
    } finally {
      await opened.close();
    }
  }
  return plan;
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
  // A ref is chosen with its `refs:` source; the refs of one source fetch into one store, one at a time.
  const isChosen = (source: SourceConfig) =>
    chosen(source) || (source.group !== undefined && chosen({ ...source, id: source.group.id }));
  const inStoreTurn = oneAtATimePer();
  const inTurn = <T>(source: SourceConfig, work: () => Promise<T>): Promise<T> =>
    source.group === undefined ? work() : inStoreTurn(source.group.id, work);
  const { plan, results } = await withScratch(async (dataDir) => {
    const plan = await lockPlan(config, chosen, previous.lock.sources, dataDir);
    const results = await eachSource(plan.sources, config.sync.concurrency, (source) =>
      inTurn(source, async () => {
        const old = entries.get(source.id);
        if (!isChosen(source) && lockMismatch(source, old) === undefined) return { entry: old! };
        const now = await loadAt(source, plan.targets.get(source.id) ?? 'resolve', dataDir);
        if (!now.ok) return { failure: now.failure };
        const entry = lockedSourceOf(source, now.index);
        if (old?.repository === entry.repository && old.commit === entry.commit) return { entry };
        if (old === undefined || old.repository !== entry.repository)
          return { entry, diff: sourceDiff(source.id, entry.repository, undefined, { index: now.index }) };
        // The old end is what was locked: loaded as it was, its signer as the lockfile recorded it.
        const { verify: _keys, ...unverified } = source;
        const before = await loadAt(unverified, { commit: old.commit }, dataDir);
        if (!before.ok) return { entry, diff: summaryDiff(old, entry) };
        const from = { index: before.index, signer: old.signer };
        return { entry, diff: sourceDiff(source.id, entry.repository, from, { index: now.index }) };
      }),
    );
    return { plan, results };
  });
  // A `refs:` source whose listing failed keeps the refs it locked before.
  const kept = previous.lock.sources.filter((entry) =>
    plan.failures.some((failure) => failure.id === entry.group),
  );
  const configured = new Set([...plan.sources, ...kept].map((source) => source.id));
  const removed = previous.lock.sources.filter((entry) => !configured.has(entry.id)).map(removal);
  return {
    file,
    before: previous.text,
    lock: {
      version: 1,
      sources: [...results.flatMap((r) => (r.entry === undefined ? [] : [r.entry])), ...kept],
    },
    diffs: [...results.flatMap((r) => (r.diff === undefined ? [] : [r.diff])), ...removed],
    failures: [...plan.failures, ...results.flatMap((r) => (r.failure === undefined ? [] : [r.failure]))],
    refused: plan.refused,
  };
}
