import type { SourceConfig } from '../config/index.ts';
import { openLocalRepository, openStore, removeIncomplete, type Repository } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';

/** A source's repository, opened once at first use (so pack indexes are parsed once) until closed. */
export interface RepositoryOnUse {
  /** The repository, opened now when it is not; an open that failed is tried again at the next call. */
  get(): Promise<Repository>;
  /** Ends its git processes and closes its files; the next `get` opens it again. */
  close(): Promise<void>;
}

/**
 * Opens `config`'s repository (a remote source's store at `storeDir`) when first used. With `sweep` (the
 * caller holds dataDir's lock), what an interrupted transfer left in the store is removed first, and logged.
 */
export function repositoryOnUse(config: SourceConfig, storeDir: string, sweep?: Logger): RepositoryOnUse {
  let opened: Promise<Repository> | undefined;
  const swept = async (): Promise<void> => {
    if (sweep === undefined) return;
    const removed = await removeIncomplete(storeDir);
    if (removed.length > 0)
      sweep.warn({ source: config.id, removed }, 'removed what an interrupted transfer left in the store');
  };
  return {
    get() {
      opened ??= (
        config.location.kind === 'local'
          ? openLocalRepository(config.location.path, config.git, config.location.given)
          : swept().then(() => openStore(storeDir, config.git))
      ).catch((error: unknown) => {
        // Not there yet (a local path created later): the next sync tries again.
        opened = undefined;
        throw error;
      });
      return opened;
    },
    async close() {
      const open = opened;
      opened = undefined;
      await (await open?.catch(() => undefined))?.close();
    },
  };
}
