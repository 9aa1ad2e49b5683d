import { createCatalog } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import type { FetchProgress } from '../git/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import type { Logger } from '../shared/log.ts';
import { joinDataDir, type Membership } from '../sync/dataDir/membership.ts';
import { DataDirConflictError } from '../sync/dataDir/processes.ts';
import { DataDirUnusableError } from '../sync/dataDir/unusable.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { createSyncWorker } from '../sync/worker.ts';

/**
 * `skillpin sync`: syncs every source once, showing progress on stderr; a source another process on dataDir
 * leases is synced by that process, asked and waited for (up to `waitMs`, else the source's deadline). Exit
 * `failed` if any source failed, `busy` if one's holder did not publish in time, `config` (nothing synced) if
 * another process defines a source otherwise, `cannotCreate` if dataDir cannot be created or written.
 */
export async function sync(
  config: Config,
  options: { waitMs?: number; interactive: boolean },
  logger: Logger,
  err: (text: string) => void,
): Promise<ExitStatus> {
  let membership: Membership;
  try {
    membership = joinDataDir(config, { command: 'sync' }, logger);
  } catch (error) {
    if (error instanceof DataDirUnusableError) {
      err(`skillpin sync: ${error.message}\n`);
      return EXIT.cannotCreate;
    }
    if (!(error instanceof DataDirConflictError)) throw error;
    err(`skillpin sync: ${error.message}\n`);
    return EXIT.config;
  }
  const { interactive } = options;
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
  const worker = createSyncWorker({
    config,
    catalog: createCatalog(),
    logger,
    onProgress,
    membership,
    askedWaitMs: options.waitMs,
  });
  let outcomes: SyncOutcome[];
  // What each source served before: a sync merged with a publication of another process still says it moved.
  let before = new Map<string, string | undefined>();
  try {
    // Restored first, so retention carries on from what was served (and `have` spares re-sending it).
    await worker.restore();
    before = new Map(worker.status().sources.map((s) => [s.id, s.current?.commit]));
    outcomes = await worker.syncAll('skillpin sync');
  } finally {
    await worker.stop();
  }
  if (interactive) err('\r\x1b[K');
  const after = worker.status().sources;
  let failedRefs = false;
  for (const outcome of outcomes) {
    const refs = after.find((s) => s.id === outcome.id)?.refs;
    if (refs !== undefined) {
      // A refs: source: each of its refs with its commit (or why it failed), then how the source's sync ended.
      const failed: string[] = [];
      for (const ref of after.filter((s) => s.group === outcome.id)) {
        if (ref.lastError !== null) {
          failed.push(ref.id);
          err(`${ref.id}: FAILED ${ref.lastError.reason}: ${ref.lastError.detail}\n`);
        } else if (ref.current !== null) {
          const moved = ref.current.commit !== before.get(ref.id);
          err(`${ref.id}: ${moved ? 'now at' : 'unchanged at'} ${ref.current.commit}\n`);
        }
      }
      failedRefs ||= failed.length > 0;
      err(
        !outcome.ok
          ? `${outcome.id}: FAILED ${outcome.reason}: ${outcome.detail}\n`
          : failed.length > 0
            ? `${outcome.id}: FAILED: ${failed.length} of ${refs.served.length} refs failed (${failed.join(', ')})\n`
            : `${outcome.id}: ${refs.served.length} refs\n`,
      );
      continue;
    }
    err(
      outcome.ok
        ? `${outcome.id}: ${outcome.commit !== before.get(outcome.id) ? 'now at' : 'unchanged at'} ${outcome.commit}\n`
        : `${outcome.id}: FAILED ${outcome.reason}: ${outcome.detail}${outcome.serving === undefined ? '' : ` (still serving ${outcome.serving})`}\n`,
    );
  }
  if (outcomes.some((outcome) => !outcome.ok && outcome.reason === 'source-pending')) return EXIT.busy;
  return outcomes.every((outcome) => outcome.ok) && !failedRefs ? EXIT.ok : EXIT.failed;
}
