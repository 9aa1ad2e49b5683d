import { createHash } from 'node:crypto';
import type { SourceConfig } from '../../config/index.ts';
import { definitionOf } from '../dataDir/processes.ts';
import type { CoordinationStatus, SourceReplicas } from '../../shared/status.ts';
import type { Published, PublicationReason } from './publication.ts';

/** What one sync of a source may do, as the replicas agreed it. */
export type PollVerdict =
  /** No coordination now (not configured, or Redis unreachable): this replica resolves the ref on its own. */
  | { kind: 'alone' }
  /** This replica holds the source's poll lease: it resolves the ref and publishes what it resolves under `token`. */
  | { kind: 'holder'; token: string }
  /**
   * Another replica holds the lease: `hint` is the commit it published last and when it published it (ms since the
   * epoch, on this replica's clock: Redis's time of the publication, moved by how far this replica's clock was from
   * Redis's in this poll), signed with the shared secret, fresh on Redis's clock and no older than one read before;
   * absent: none yet or refused. A hint is never trusted bytes: the commit is fetched from the source's own remote
   * like any other.
   */
  | {
      kind: 'follower';
      holder: string;
      hint?: { published: Published; at: number };
      /** What Redis holds as the publication was not taken (unsigned, forged, stale, replayed): no `hint` then. */
      refused?: { reason: PublicationReason; detail: string };
    };

/** What the replicas tell one another, as this replica hears it. */
export interface CoordinationEvents {
  /** Source `id` should sync now: a replica took a webhook for it, published a new commit, or its lease lapsed. */
  triggered(id: string, why: string): void;
}

/** The sync layer's view of coordination between replicas; an implementation never throws at its caller. */
export interface Coordination {
  /** The sources this replica follows (again after a reload); only remote sources tracking a ref take part. */
  follow(sources: readonly SourceConfig[], events: CoordinationEvents): void;
  /** Who resolves source `id` for this sync: this replica (taking or renewing its lease), another, or each alone. */
  poll(id: string): Promise<PollVerdict>;
  /** Publishes what the lease holder resolved, fenced by the lease's `token`: a lost lease publishes nothing. */
  publish(id: string, token: string, published: Published): Promise<void>;
  /** Counts a publication of source `id` this replica refused (the caller logs it): status and metrics show the counts. */
  refused(id: string, reason: PublicationReason): void;
  /** Asks every replica to sync source `id` now (a webhook arrived here). */
  announce(id: string, why: string): void;
  /** Reports the commit this replica lists per source (`undefined`: none yet). */
  report(served: Readonly<Record<string, string | undefined>>): void;
  status(): CoordinationStatus;
  /** What the replicas serve of source `id`, as last read; `undefined` when it does not take part. */
  replicas(id: string): SourceReplicas | undefined;
  /** Gives up the leases this replica holds and disconnects. */
  close(): Promise<void>;
}

/** Whether a source takes part: only a remote ref is polled (a pinned commit never moves, a local path is per machine). */
export const coordinated = (source: SourceConfig): boolean =>
  // A ref of a `refs:` source resolves from its source's listing, never from a ref listing of its own.
  source.location.kind === 'remote' && source.target.kind !== 'commit' && source.group === undefined;

/**
 * The name replicas share a source under: its id and a digest of its definition (repository, ref, paths,
 * verification), so replicas that define an id otherwise (a rollout changing it) never share its lease or hints.
 */
export function sharedKey(source: SourceConfig): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(definitionOf(source)))
    .digest('hex');
  return `${source.id}:${digest.slice(0, 16)}`;
}
