import { isDeepStrictEqual } from 'node:util';
import type { ServedSource } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { Followed } from './followed.ts';
import { restoreServed } from './restore.ts';
import type { SourceState, StateFile, SyncState } from './state.ts';
import type { SourceRecord } from './step.ts';

/** What the last run left in state.json; a corrupt one is logged and read as empty (sources are rebuilt). */
export async function lastState(stateFile: StateFile, logger: Logger): Promise<SyncState> {
  const read = await stateFile.read();
  if (read.found === 'corrupt')
    logger.warn(
      { file: stateFile.file, detail: read.detail },
      'state.json is corrupt: rebuilding it from the index files and pins in dataDir',
    );
  return read.state;
}

/** What a source starts from: restored from dataDir alone, with the times state.json kept (`last`). */
export async function restoredRecord(
  { config, source, retention }: Followed,
  last: SourceState | undefined,
  logger: Logger,
): Promise<SourceRecord> {
  const { served, dropped } = await restoreServed(source, config, last, logger);
  retention.drop(dropped);
  return {
    tried: false,
    ...(served === undefined ? {} : { served }),
    ...(last?.lastSync === undefined ? {} : { lastSync: last.lastSync }),
    ...(last?.lastSuccess === undefined ? {} : { lastSuccess: last.lastSuccess }),
    ...(last?.lastError === undefined ? {} : { lastError: last.lastError }),
    ...(last?.listing === undefined ? {} : { listing: last.listing }),
  };
}

/** What a source a reconfigure adds or changes starts from, given its config and what it served `before`. */
export async function restartedRecord(
  restarting: Followed,
  before: { config: SourceConfig | undefined; served: ServedSource | undefined },
  logger: Logger,
): Promise<SourceRecord> {
  const old = before.served;
  // A changed source keeps its commits while its repository is the same one: they are re-indexed under the
  // new settings (paths, strictNames, verify) from dataDir. Another repository's commits are forgotten.
  if (old !== undefined && !isDeepStrictEqual(before.config?.location, restarting.config.location)) {
    restarting.retention.drop([old.current, ...old.retained].map((ns) => ns.commit));
    return { tried: false };
  }
  // An added source starts as at a start: from what dataDir holds for it.
  const last: SourceState | undefined =
    old === undefined
      ? undefined
      : { current: old.current.commit, retained: old.retained.map((ns) => ns.commit) };
  return restoredRecord(restarting, last, logger);
}
