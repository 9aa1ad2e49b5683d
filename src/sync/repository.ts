import type { SourceConfig } from '../config/index.ts';
import { openLocalRepository, openStore, removeIncomplete, type Repository } from '../git/index.ts';

/** A source's repository, opened once at first use (so pack indexes are parsed once) until closed. */
export interface RepositoryOnUse {
  /** The repository, opened now when it is not; an open that failed is tried again at the next call. */
  get(): Promise<Repository>;
  /** Ends its git processes and closes its files; the next `get` opens it again. */
  close(): Promise<void>;
  /**
   * Removes what an interrupted transfer left in a remote source's store, and returns it. Only the holder of the
   * source's lease calls it: no other process writes the store meanwhile.
   */
  sweep(): Promise<string[]>;
}

/** Opens `config`'s repository (a remote source's store at `storeDir`) when first used. */
export function repositoryOnUse(config: SourceConfig, storeDir: string): RepositoryOnUse {
  let opened: Promise<Repository> | undefined;
  return {
    get() {
      opened ??= (
        config.location.kind === 'local'
          ? openLocalRepository(config.location.path, config.git, config.location.given)
          : openStore(storeDir, config.git)
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
    sweep: async () => (config.location.kind === 'local' ? [] : removeIncomplete(storeDir)),
  };
}
