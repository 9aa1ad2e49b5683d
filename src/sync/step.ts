import type { Namespace, ServedSource, SourceFailure } from '../catalog/index.ts';
import { causeOf, GitError, type ResolvedRef } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { errnoReason } from '../shared/reasons.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { messageOf } from '../shared/text.ts';
import { coordinatedStep } from './coordination/step.ts';
import type { Damage } from './damage.ts';
import type { Followed } from './follower.ts';
import { advance, replaced } from './retention.ts';
import { persist, publish, record, type SourceRecord, type Worker } from './served.ts';
import type { Source } from './source.ts';

/**
 * One sync of a source by this process, under its lease, in its turn: its target resolved as the replicas agree
 * (coordination/step.ts), then repaired, fetched, indexed and retained (`syncSource`); then recorded, served and
 * written to state.json, which lets retention forget what it dropped.
 */
export async function syncHere(w: Worker, followed: Followed, why: string): Promise<SyncOutcome> {
  const { source } = followed;
  const { id, keep, group } = followed.config;
  const { logger, clock } = w;
  const at = () => new Date(clock.now()).toISOString();
  const run = (resolve: () => Promise<ResolvedRef>) =>
    syncSource(source, w.records.get(id)!, { keep, why, at, logger, damaged: w.damage.of(id), resolve });
  const coordinated = () =>
    coordinatedStep(followed, run, {
      coordination: w.coordination,
      logger,
      serving: w.records.get(id)!.served?.current.commit,
      movedFrom: w.records.get(id)!.served?.retained.map((ns) => ns.commit) ?? [],
      aloneAt: w.aloneAt.get(id),
      onAlone: () => w.aloneAt.set(id, clock.now()),
    });
  // The refs of one `refs:` source fetch into one store, one at a time.
  const step = await inTurn(w, coordinated, group?.id);
  if (w.stopped) return step.outcome;
  record(w, id, step.record, step.dropped);
  w.damage.repaired(id, step.repaired);
  publish(w);
  await persist(w, [followed]);
  return step.outcome;
}

/**
 * Runs `step` in its turn in the worker's queue (and after every earlier step of the same `store`), and tells
 * `onSynced` how long it ran, in seconds: waiting for its turn is not counted.
 */
export async function inTurn<T extends { outcome: SyncOutcome }>(
  w: Worker,
  step: () => Promise<T>,
  store?: string,
): Promise<T> {
  const timed = async () => {
    const started = performance.now();
    const done = await step();
    w.onSynced?.(done.outcome, (performance.now() - started) / 1000);
    return done;
  };
  const turn = async () => (await w.queue.add(timed))!;
  return store === undefined ? turn() : w.storeTurn(store, turn);
}

export function failureOf(id: string, error: unknown): SourceFailure {
  if (error instanceof GitError) return { id, reason: error.code, detail: error.message };
  const errno = errnoReason(error);
  if (errno !== undefined) return { id, ...errno };
  return { id, reason: 'source-internal', detail: 'unexpected error; see the log' };
}

/** What git said of a failed sync, for the outcome: absent, not undefined, when it said nothing. */
export function causeField(error: unknown): { cause?: string } {
  const cause = causeOf(error);
  return cause === undefined ? {} : { cause };
}

/** A failed sync in the log: its reason and sentence, git's own log of it, and the message of an internal error. */
export function logFailure(
  logger: Logger,
  failure: SourceFailure,
  error: unknown,
  fields: Record<string, unknown>,
): void {
  logger.error(
    {
      source: failure.id,
      reason: failure.reason,
      ...fields,
      ...(error instanceof GitError && error.log !== undefined ? { log: error.log } : {}),
      ...(failure.reason === 'source-internal' ? { err: messageOf(error) } : {}),
    },
    failure.detail,
  );
}

/** The record of a sync that failed at `at`: what the source served before stays, and the failure is said. */
export const failedRecord = (before: SourceRecord, failure: SourceFailure, at: string): SourceRecord => ({
  ...before,
  tried: true,
  failure,
  lastSync: at,
  lastError: { reason: failure.reason, detail: failure.detail, at },
});

export interface SyncStep {
  outcome: SyncOutcome;
  record: SourceRecord;
  dropped: string[];
  /** The damaged commits this step repaired. */
  repaired: string[];
}

/**
 * One sync of one source: repair what reads found damaged, resolve its target, and fetch and index it when it
 * moved; an unchanged commit's objects are checked to be in the store (and repaired when not). Never throws: a
 * failure is an outcome, and the record keeps what the source served. `at` is when it finished (ISO 8601).
 */
export async function syncSource(
  source: Source,
  before: SourceRecord,
  options: {
    keep: number;
    why: string;
    at: () => string;
    logger: Logger;
    damaged?: readonly Damage[];
    /** Where the target comes from (default: the source resolves it): the commit another replica published. */
    resolve?: () => Promise<ResolvedRef>;
  },
): Promise<SyncStep> {
  const { id } = source;
  const { logger, why } = options;
  const started = performance.now();
  const { failure: _failure, lastError: _lastError, served: _served, ...clean } = before;
  let held = before.served;
  const repaired: string[] = [];
  const repair = async (damage: Damage) => {
    const ns = await source.repair(damage);
    // Repaired only when reads are good again: a reader still holding the damage is no repair.
    const still = await source.readable(ns);
    if (still !== undefined)
      throw new GitError(
        'source-store-damaged',
        `the repair of commit ${damage.commit} left its objects unreadable`,
        { log: still.log },
      );
    if (held !== undefined) held = replaced(held, ns);
    repaired.push(damage.commit);
    logger.info({ source: id, commit: damage.commit, kind: damage.kind, why }, 'repaired a damaged commit');
  };
  const succeeded = (commit: string, changed: boolean, served: ServedSource, dropped: string[]): SyncStep => {
    const at = options.at();
    return {
      outcome: { id, ok: true, commit, changed, ...(repaired.length === 0 ? {} : { repaired }) },
      record: { ...clean, served, tried: true, lastSync: at, lastSuccess: at },
      dropped,
      repaired,
    };
  };
  try {
    for (const damage of options.damaged ?? []) await repair(damage);
    const target = await (options.resolve ?? (() => source.resolve()))();
    const { commit } = target;
    if (held?.current.commit === commit) {
      // A store that lost the commit's objects is repaired here, never reported unchanged.
      const damage = await source.check(held.current);
      if (damage !== undefined) {
        logger.warn({ source: id, commit, kind: damage.kind, log: damage.log, why }, damage.detail);
        await repair(damage);
      }
      return succeeded(commit, false, held, []);
    }
    const ns: Namespace = await source.load(target, held?.current.commit);
    const { served, dropped } = advance(held, ns, options.keep);
    logger.info(
      {
        source: id,
        commit,
        why,
        skills: ns.skills.length,
        problems: ns.problems.length,
        signer: ns.signer,
        retained: served.retained.map((r) => r.commit),
        ms: Math.round(performance.now() - started),
      },
      'source updated',
    );
    // A skill or paths entry that cannot be served is an error in the log too; a warning stays a warning.
    for (const p of ns.problems)
      logger[p.severity === 'error' ? 'error' : p.severity === 'warning' ? 'warn' : 'info'](
        { source: id, commit, path: p.path, reason: p.reason, severity: p.severity },
        p.detail,
      );
    return succeeded(commit, true, served, dropped);
  } catch (error) {
    const failure = failureOf(id, error);
    logFailure(logger, failure, error, { why, serving: held?.current.commit ?? null });
    const at = options.at();
    return {
      outcome: {
        id,
        ok: false,
        reason: failure.reason,
        detail: failure.detail,
        serving: held?.current.commit,
        ...causeField(error),
      },
      record: { ...failedRecord(before, failure, at), served: held },
      dropped: [],
      repaired,
    };
  }
}
