import type { ServedSource } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import type { Followed } from './followed.ts';
import type { SourceState, StateFile, SyncState } from './state.ts';
import type { SourceRecord } from './step.ts';

const commitsOf = (served: ServedSource | undefined) =>
  new Set(served === undefined ? [] : [served.current, ...served.retained].map((ns) => ns.commit));

/** What state.json remembers of each source's record: the commits it serves and when it synced. */
export function savedState(records: ReadonlyMap<string, SourceRecord>): SyncState {
  const sources: Record<string, SourceState> = {};
  for (const [id, r] of records) {
    sources[id] = {
      ...(r.served === undefined ? {} : { current: r.served.current.commit }),
      retained: r.served?.retained.map((ns) => ns.commit) ?? [],
      ...(r.lastSync === undefined ? {} : { lastSync: r.lastSync }),
      ...(r.lastSuccess === undefined ? {} : { lastSuccess: r.lastSuccess }),
      ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
    };
  }
  return { version: 1, sources };
}

/**
 * Writes state.json from the records, then forgets what fell out of the touched sources' retention: a crash in
 * between restarts with it intact. A failed write is logged and forgets nothing.
 */
export function statePersister(
  stateFile: StateFile,
  logger: Logger,
  records: () => ReadonlyMap<string, SourceRecord>,
): (...touched: Followed[]) => Promise<void> {
  return async (...touched) => {
    try {
      await stateFile.write(savedState(records()));
    } catch (error) {
      logger.error({ err: messageOf(error), file: stateFile.file }, 'could not write state.json');
      return;
    }
    // The records as they are once written: a commit served again since it was dropped is kept.
    for (const followed of touched)
      await followed.retention.forgetDropped(commitsOf(records().get(followed.config.id)?.served));
  };
}
