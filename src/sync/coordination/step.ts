import { GitError, type ResolvedRef } from '../../git/index.ts';
import type { Logger } from '../../shared/log.ts';
import { type Coordination, coordinated } from './coordination.ts';
import type { SyncOutcome } from '../../shared/status.ts';
import type { Followed } from '../follower.ts';
import type { PublicationReason } from './publication.ts';

/** One sync of a source, given where its target comes from. */
type Run<T> = (resolve: () => Promise<ResolvedRef>) => Promise<T>;

export interface CoordinatedOptions {
  coordination: Coordination | undefined;
  logger: Logger;
  /** The commit this replica lists now, if any. */
  serving: string | undefined;
  /** The commits this replica moved away from and still serves (retained): a publication never moves it back there. */
  movedFrom: readonly string[];
  /** When this replica last resolved the ref itself while alone (ms since the epoch): a hint older than that is not taken. */
  aloneAt: number | undefined;
  /** Told when this replica resolved the ref on its own (coordination down). */
  onAlone: () => void;
}

/**
 * Why a signed, fresh publication still does not move this replica: a branch's commit it moved away from (a replay
 * or a force-push back, which only its own listing may follow), or a tag it resolved to another commit.
 */
function backward(
  followed: Followed,
  target: ResolvedRef,
  options: CoordinatedOptions,
): { reason: PublicationReason; detail: string } | undefined {
  const { serving } = options;
  if (serving === undefined || target.commit === serving) return undefined;
  const ref = followed.config.target.kind === 'ref' ? followed.config.target.ref : '';
  if (target.tag !== undefined || ref.startsWith('refs/tags/'))
    return {
      reason: 'publication-tag-moved',
      detail: `the published commit ${target.commit} for tag ${ref} is not the ${serving} this replica resolved it to`,
    };
  if (options.movedFrom.includes(target.commit))
    return {
      reason: 'publication-backward',
      detail: `the published commit ${target.commit} is one this replica moved away from (it serves ${serving})`,
    };
  return undefined;
}

/**
 * One sync of a source as the replicas agreed it: the lease holder lists the remote's refs and publishes the commit
 * it resolved; another replica fetches exactly that commit (no listing of its own), and lists only when that commit
 * cannot be served here or the publication is refused (unsigned, forged, stale, replayed, backward: logged and
 * counted); without coordination each replica lists on its own.
 */
export async function coordinatedStep<T extends { outcome: SyncOutcome }>(
  followed: Followed,
  run: Run<T>,
  options: CoordinatedOptions,
): Promise<T> {
  const { source } = followed;
  const { id } = followed.config;
  const { coordination, logger } = options;
  const own = () => source.resolve();
  if (coordination === undefined || !coordinated(followed.config)) return run(own);
  const verdict = await coordination.poll(id);
  if (verdict.kind === 'alone') {
    options.onAlone();
    return run(own);
  }
  if (verdict.kind === 'holder') {
    let resolved: ResolvedRef | undefined;
    const step = await run(async () => (resolved = await own()));
    if (step.outcome.ok && resolved !== undefined) await coordination.publish(id, verdict.token, resolved);
    return step;
  }
  const { hint, holder } = verdict;
  const refused =
    verdict.refused ?? (hint === undefined ? undefined : backward(followed, hint.target, options));
  if (refused !== undefined) {
    coordination.refused(id, refused.reason);
    logger.warn(
      { source: id, reason: refused.reason, holder, serving: options.serving ?? null },
      `${refused.detail}; this replica resolves the ref itself`,
    );
    options.onAlone();
    return run(own);
  }
  // Nothing published yet, or only before what this replica resolved alone: it keeps what it serves.
  const stale = hint === undefined || (options.aloneAt !== undefined && hint.at < options.aloneAt);
  if (stale && options.serving !== undefined) {
    const serving = options.serving;
    return run(async () => ({ commit: serving }));
  }
  if (hint === undefined)
    return run(async () => {
      throw new GitError(
        'source-pending',
        `replica ${holder} polls this source for the replicas and has published no commit of it yet`,
      );
    });
  const step = await run(async () => hint.target);
  if (step.outcome.ok) return step;
  logger.warn(
    { source: id, commit: hint.target.commit, holder, reason: step.outcome.reason },
    'the commit the polling replica published cannot be served here; this replica resolves the ref itself',
  );
  return run(own);
}
