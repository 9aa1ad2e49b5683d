import type { Namespace, ServedSource } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import { rebuilt } from './retention.ts';
import type { Source } from './source.ts';
import type { SourceState } from './state.ts';
import { failureOf } from './step.ts';

/**
 * What a source served when the last run ended, from dataDir alone (never the network): the commits state.json
 * names, or, when it names none for this source (missing or corrupt), the commits the index files and pins
 * hold; serving a lockfile, only the locked commit. `dropped`: held commits beyond retention, to forget once
 * state.json is written.
 */
export async function restoreServed(
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
