import type { Namespace, ServedSource } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import { GitError, type ResolvedRef } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { Refusal, Role } from './owner.ts';

/** Whether a loaded commit may replace what is served (SyncStep's `accept`). */
export type Accept = (loaded: Namespace, held: ServedSource | undefined) => Refusal | undefined;

/** One sync of a source, given where its target comes from (and, for a publication, what it may not move to). */
export type Run<T> = (resolve: () => Promise<ResolvedRef>, accept?: Accept) => Promise<T>;

/**
 * A published commit older than the one served (by committer time) moves a branch backward: an ancestor, or a
 * replay. Stores hold commits at depth 1, so no history is walked: its commit time says it. Only this replica's own
 * listing of the remote may move it there (a force-push back is followed that way).
 */
export const forwardOnly: Accept = (loaded, held) =>
  held === undefined || loaded.commitTime >= held.current.commitTime
    ? undefined
    : {
        reason: 'publication-backward',
        detail: `the published commit ${loaded.commit} (${loaded.commitTime}) is older than the ${held.current.commit} this replica serves (${held.current.commitTime})`,
      };

export interface TargetOptions {
  logger: Logger;
  /** The commit this replica lists now, if any. */
  serving: string | undefined;
  /** The commits this replica moved away from and still serves (retained): a publication never moves it back there. */
  movedFrom: readonly string[];
}

/**
 * Why a signed, fresh publication still does not move this replica: a branch's commit it moved away from (a replay
 * or a force-push back, which only its own listing may follow), or a tag it resolved to another commit.
 */
/** Whether `config` follows a tag (a tag's publication is checked against what this replica resolved it to). */
const isTag = (config: SourceConfig, target: ResolvedRef) =>
  target.tag !== undefined || (config.target.kind === 'ref' && config.target.ref.startsWith('refs/tags/'));

export function backward(
  config: SourceConfig,
  target: ResolvedRef,
  options: Pick<TargetOptions, 'serving' | 'movedFrom'>,
): Refusal | undefined {
  const { serving } = options;
  if (serving === undefined || target.commit === serving) return undefined;
  const ref = config.target.kind === 'ref' ? config.target.ref : '';
  if (isTag(config, target))
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
 * One sync of a ref given who syncs it (`role`): alone or holding, this process resolves the ref itself (`own`) and
 * a holder publishes what it resolved; following another replica, it fetches exactly the published commit (no
 * listing of its own), and lists only when that commit cannot be served here or the publication is refused
 * (unsigned, forged, stale, replayed, backward: logged and counted).
 */
export async function syncByRole<T extends { outcome: SyncOutcome; refused?: Refusal }>(
  role: Exclude<Role, { via: 'machine' }>,
  config: SourceConfig,
  own: () => Promise<ResolvedRef>,
  run: Run<T>,
  options: TargetOptions,
): Promise<T> {
  const { id } = config;
  const { logger } = options;
  if (role.kind === 'alone') return run(own);
  if (role.kind === 'hold') {
    let resolved: ResolvedRef | undefined;
    const step = await run(async () => (resolved = await own()));
    if (step.outcome.ok && resolved !== undefined) await role.publish({ target: resolved });
    return step;
  }
  const { holder } = role;
  const hint =
    role.hint !== undefined && 'target' in role.hint.published ? role.hint.published.target : undefined;
  const refused = role.refused ?? (hint === undefined ? undefined : backward(config, hint, options));
  if (refused !== undefined) {
    role.refuse(refused);
    logger.warn(
      { source: id, reason: refused.reason, holder, serving: options.serving ?? null },
      `${refused.detail}; this replica resolves the ref itself`,
    );
    return run(own);
  }
  // Nothing published yet, or only before what this replica resolved alone: it keeps what it serves.
  if ((hint === undefined || role.behind) && options.serving !== undefined) {
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
  const step = await run(async () => hint, forwardOnly);
  if (step.refused !== undefined) {
    role.refuse(step.refused);
    logger.warn(
      { source: id, reason: step.refused.reason, holder, serving: options.serving ?? null },
      `${step.refused.detail}; this replica resolves the ref itself`,
    );
    return run(own);
  }
  if (step.outcome.ok) return step;
  logger.warn(
    { source: id, commit: hint.commit, holder, reason: step.outcome.reason },
    'the commit the polling replica published cannot be served here; this replica resolves the ref itself',
  );
  return run(own);
}
