import type { Namespace, ServedSource } from '../catalog/index.ts';
import { GitError, type ResolvedRef } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { Damage } from './damage.ts';
import { causeField, failedRecord, failureOf, logFailure } from './failure.ts';
import type { Refusal } from './owner.ts';
import type { SourceRecord } from './record.ts';
import { advance, replaced } from './retention.ts';
import type { Source } from './source.ts';

export interface SyncStep {
  outcome: SyncOutcome;
  record: SourceRecord;
  dropped: string[];
  /** The damaged commits this step repaired. */
  repaired: string[];
  /** The commit loaded was not accepted (`accept`): nothing changed but `dropped`. */
  refused?: Refusal;
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
    /** When the sync was asked (performance.now()): what another source of its repository resolved or checked
     * since then is its answer too (Source.resolve). */
    since?: number;
    /** Whether the commit loaded may replace what is served (a publication moving a branch backward may not). */
    accept?: (loaded: Namespace, held: ServedSource | undefined) => Refusal | undefined;
    /** The worker is stopping: its git processes are ended, so a failure now is a sync cut short, not logged. */
    stopping?: () => boolean;
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
    const target = await (options.resolve ?? (() => source.resolve(options.since)))();
    const { commit } = target;
    if (held?.current.commit === commit) {
      // A store that lost the commit's objects is repaired here, never reported unchanged.
      const damage = await source.check(held.current, options.since);
      if (damage !== undefined) {
        logger.warn({ source: id, commit, kind: damage.kind, log: damage.log, why }, damage.detail);
        await repair(damage);
      }
      return succeeded(commit, false, held, []);
    }
    const ns: Namespace = await source.load(target, held?.current.commit, options.since);
    const refused = options.accept?.(ns, held);
    // Not served: what it serves stays, and the commit loaded for nothing is forgotten (unless served elsewhere).
    if (refused !== undefined) return { ...succeeded(held!.current.commit, false, held!, [commit]), refused };
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
    // Cut short by a stop, it is redone at the next start (nothing of it is recorded): no store is to blame.
    if (options.stopping?.() !== true)
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
