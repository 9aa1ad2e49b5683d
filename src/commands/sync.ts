import { createCatalog } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import type { FetchProgress } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { createSyncWorker, type SyncOutcome } from '../sync/worker.ts';

/** `skillpin sync`: sync every source once, showing progress on stderr; exit 1 if any source failed. */
export async function syncOnce(
  config: Config,
  logger: Logger,
  err: (text: string) => void,
  interactive: boolean,
): Promise<number> {
  const last = new Map<string, string>();
  const onProgress = (source: string, progress: FetchProgress | { phase: 'indexing' }) => {
    const line =
      'loaded' in progress
        ? `${source}: ${progress.phase} ${progress.loaded}/${progress.total || '?'}`
        : `${source}: indexing`;
    if (last.get(source) === line) return;
    last.set(source, line);
    // On a terminal, progress rewrites one line; in a log, only phase changes are written.
    if (interactive) err(`\r\x1b[K${line}`);
    else if (!('loaded' in progress) || progress.loaded === 0) err(`${line}\n`);
  };
  const worker = createSyncWorker({ config, catalog: createCatalog(), logger, onProgress });
  const outcomes: SyncOutcome[] = await worker.syncAll('skillpin sync');
  await worker.stop();
  if (interactive) err('\r\x1b[K');
  for (const outcome of outcomes) {
    err(
      outcome.ok
        ? `${outcome.id}: ${outcome.changed ? 'now at' : 'unchanged at'} ${outcome.commit}\n`
        : `${outcome.id}: FAILED ${outcome.reason}: ${outcome.detail}${outcome.serving === undefined ? '' : ` (still serving ${outcome.serving})`}\n`,
    );
  }
  return outcomes.every((outcome) => outcome.ok) ? 0 : 1;
}
