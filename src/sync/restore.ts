import { isDeepStrictEqual } from 'node:util';
import type { Namespace, ServedSource } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { Followed } from './follower.ts';
import { rebuilt } from './retention.ts';
import { commitsOf, type Restored } from './record.ts';
import type { Source } from './source.ts';
import type { SourceState, StateFile, SyncState } from './dataDir/state.ts';
import { failureOf } from './failure.ts';

/** What the last run left in state.json; a corrupt one is logged and read as empty (sources are rebuilt). */
export async function lastState(stateFile: StateFile, logger: Logger): Promise<SyncState> {
  const read = await stateFile.read();
  if (read.found === 'corrupt')
    logger.warn(
      { file: stateFile.file, reason: read.reason, detail: read.detail },
      'state.json is corrupt: rebuilding it from the index files and pins in dataDir',
    );
  return read.state;
}

/** What a source starts from: restored from dataDir alone, with the times state.json kept (`last`). */
export async function restoredRecord(
  { config, source }: Followed,
  last: SourceState | undefined,
  logger: Logger,
): Promise<Restored> {
  const { served, dropped } = await restoreServed(source, config, last, logger);
  const { lastSync, lastSuccess, lastError, listing } = last ?? {};
  return { record: { tried: false, served, lastSync, lastSuccess, lastError, listing }, dropped };
}

/** What a source a reconfigure adds or changes starts from, given its config and what it served `before`. */
export async function restartedRecord(
  restarting: Followed,
  before: { config: SourceConfig | undefined; served: ServedSource | undefined },
  logger: Logger,
): Promise<Restored> {
  const old = before.served;
  // A changed source keeps its commits while its repository is the same one: they are re-indexed under the
  // new settings (paths, strictNames, verify) from dataDir. Another repository's commits are forgotten.
  if (old !== undefined && !isDeepStrictEqual(before.config?.location, restarting.config.location))
    return { record: { tried: false }, dropped: commitsOf(old) };
  // An added source starts as at a start: from what dataDir holds for it.
  const last: SourceState | undefined =
    old === undefined
      ? undefined
      : { current: old.current.commit, retained: old.retained.map((ns) => ns.commit) };
  return restoredRecord(restarting, last, logger);
}

/**
 * What a source served when the last run ended, from dataDir alone (never the network): the commits state.json
 * names, or, when it names none for this source (missing or corrupt), the commits the index files and pins
 * hold; serving a lockfile, only the locked commit. `dropped`: held commits beyond retention, to forget once
 * state.json is written.
 */
async function restoreServed(
  source: Source,
  config: SourceConfig,
  saved: SourceState | undefined,
  logger: Logger,
): Promise<{ served?: ServedSource; dropped: string[] }> {
  const restore = async (commit: string): Promise<Namespace | undefined> => {
    try {
      return await source.restore(commit);
    } catch (error) {
      logger.warn(
        { source: source.id, commit, reason: failureOf(source.id, error).reason },
        'a commit served before could not be restored',
      );
      return undefined;
    }
  };
  const { target } = config;
  if (target.kind === 'commit' && target.lock !== undefined) {
    // Serving a lockfile: the locked commit alone, if dataDir holds it; whatever served before is dropped.
    const held =
      saved === undefined
        ? await source.held()
        : [...(saved.current === undefined ? [] : [saved.current]), ...saved.retained];
    const current = held.includes(target.commit) ? await restore(target.commit) : undefined;
    const dropped = held.filter((commit) => commit !== target.commit);
    if (current === undefined) return { dropped };
    return { served: { id: source.id, current, retained: [] }, dropped };
  }
  if (saved !== undefined) {
    const current = saved.current === undefined ? undefined : await restore(saved.current);
    if (current === undefined) return { dropped: [] };
    const retained: Namespace[] = [];
    for (const commit of saved.retained.slice(0, config.keep)) {
      const ns = await restore(commit);
      if (ns !== undefined) retained.push(ns);
    }
    return { served: { id: source.id, current, retained }, dropped: [] };
  }
  const held: Namespace[] = [];
  for (const commit of await source.held()) {
    const ns = await restore(commit);
    if (ns !== undefined) held.push(ns);
  }
  const pinned = config.target.kind === 'commit' ? config.target.commit : undefined;
  const { current, retained, dropped } = rebuilt(
    held.map((ns) => ({ commit: ns.commit, commitTime: ns.commitTime, ns })),
    pinned,
    config.keep,
  );
  if (current === undefined) return { dropped: [] };
  logger.warn(
    { source: source.id, current: current.commit, retained: retained.map((c) => c.commit) },
    'state.json does not name this source: rebuilt from the index files and pins in dataDir',
  );
  return {
    served: { id: source.id, current: current.ns, retained: retained.map((c) => c.ns) },
    dropped: dropped.map((c) => c.commit),
  };
}
