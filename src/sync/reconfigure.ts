import type { ServedSource } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import { type Reconfigured, sourceChanges } from './changes.ts';
import { type Followed, unfollow } from './followed.ts';
import { restartedRecord } from './restart.ts';
import type { SourceRecord } from './step.ts';

/** The config running and a follower per source: swapped whole by a reconfigure. */
export interface Running {
  config: Config;
  followed: ReadonlyMap<string, Followed>;
}

/** A reconfigure up to its swap: what changed, what runs next, what each restarted source starts from. */
export interface Restarted {
  changes: Reconfigured;
  running: Running;
  starting: ReadonlyMap<string, SourceRecord>;
}

/**
 * Restarts the sources `next` changes: removed and changed ones stop, added and changed ones are followed
 * anew and start from what they served (`served`) while their repository is the same. Nothing is swapped yet.
 */
export async function restartChanged(
  running: Running,
  next: Config,
  follow: (source: SourceConfig, config: Config) => Followed,
  served: (id: string) => ServedSource | undefined,
  logger: Logger,
): Promise<Restarted> {
  const changes = sourceChanges(running.config.sources, next.sources);
  const { added, removed, changed } = changes;
  // A stopped follower starts no sync, and the one running lands before this goes on.
  await unfollow([...removed, ...changed].map((id) => running.followed.get(id)!));
  const ids = new Set([...added, ...changed]);
  const followed = new Map(
    next.sources.map((s) => [s.id, ids.has(s.id) ? follow(s, next) : running.followed.get(s.id)!]),
  );
  const starting = new Map<string, SourceRecord>();
  for (const id of ids) {
    const was = { config: running.followed.get(id)?.config, served: served(id) };
    starting.set(id, await restartedRecord(followed.get(id)!, was, logger));
  }
  return { changes, running: { config: next, followed }, starting };
}
