import type { ServedSource } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import type { Followed } from './followed.ts';
import type { Membership } from './membership.ts';
import { liveProcesses } from './processes.ts';
import type { SourceState, StateFile } from './state.ts';
import type { SourceRecord } from './step.ts';

const commitsOf = (served: ServedSource | undefined) =>
  new Set(served === undefined ? [] : [served.current, ...served.retained].map((ns) => ns.commit));

/** What state.json remembers of the records of sources `ids`: the commits each serves and when it synced. */
export function savedState(
  records: ReadonlyMap<string, SourceRecord>,
  ids: readonly string[],
): Record<string, SourceState> {
  const sources: Record<string, SourceState> = {};
  for (const id of ids) {
    const r = records.get(id);
    if (r === undefined) continue;
    sources[id] = {
      ...(r.served === undefined ? {} : { current: r.served.current.commit }),
      retained: r.served?.retained.map((ns) => ns.commit) ?? [],
      ...(r.lastSync === undefined ? {} : { lastSync: r.lastSync }),
      ...(r.lastSuccess === undefined ? {} : { lastSuccess: r.lastSuccess }),
      ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
      ...(r.listing === undefined ? {} : { listing: r.listing }),
    };
  }
  return sources;
}

/**
 * Writes the entries of the sources this process leases into state.json (merged with the other processes'
 * entries), then forgets what fell out of the touched sources' retention, unless another live process still
 * serves it: a crash in between restarts with it intact. `removed`: sources no longer run here, whose entries
 * go unless another live process runs them. A failed write is logged and forgets nothing.
 */
export function statePersister(
  stateFile: StateFile,
  logger: Logger,
  records: () => ReadonlyMap<string, SourceRecord>,
  membership: Membership,
  /** Commits other sources of this process serve from the same store (the refs of one `refs:` source). */
  alsoServed: (id: string) => ReadonlySet<string> = () => new Set(),
): (touched: readonly Followed[], removed?: readonly string[]) => Promise<void> {
  return async (touched, removed = []) => {
    const mine = [...records().keys()].filter((id) => membership.holds(id));
    const running = new Set(
      liveProcesses(membership.dataDir)
        .filter((other) => other.nonce !== membership.holder.nonce)
        .flatMap((other) => Object.keys(other.sources)),
    );
    try {
      await stateFile.merge(
        membership.holder,
        savedState(records(), mine),
        removed.filter((id) => !running.has(id)),
      );
    } catch (error) {
      logger.error({ err: messageOf(error), file: stateFile.file }, 'could not write state.json');
      return;
    }
    // The records as they are once written: a commit served again since it was dropped is kept.
    for (const followed of touched) {
      const { id } = followed.config;
      if (!membership.holds(id)) continue;
      await followed.retention.forgetDropped(
        commitsOf(records().get(id)?.served),
        new Set([...membership.servedElsewhere(id), ...alsoServed(id)]),
      );
    }
  };
}
