import PQueue from 'p-queue';
import type { SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { keyringOf, type ResolvedRef } from '../git/index.ts';
import type { CommitIndex } from '../index/index.ts';
import { openSource } from '../sync/source.ts';
import { failureOf } from '../sync/failure.ts';

/** Parses every `verify:` key file of `config`: a bad one is a ConfigError (exit `config`) before anything runs. */
export async function checkKeys(config: Config): Promise<Config> {
  await Promise.all(config.sources.map((source) => source.verify && keyringOf(source.verify)));
  return config;
}

/**
 * The config `serve` and `sync` run with: keys checked, and with `locked` (or `lock:` in the config) every source
 * pinned to its lockfile commit. `lock` and `update` never apply the lockfile: they follow the refs it pins.
 */
export async function servedConfig(config: Config, locked: boolean): Promise<Config> {
  await checkKeys(config);
  if (!locked && config.lock === undefined) return config;
  // The lockfile's format (and its schema) loads only for a config that is served locked.
  const { lockedConfig, lockfilePath, readLockfile } = await import('./lockfile.ts');
  const file = lockfilePath(config);
  return lockedConfig(config, readLockfile(file), file);
}

/** What loading one source at one commit gave: its index, or why it failed. */
export type Loaded = { ok: true; index: CommitIndex } | { ok: false; failure: SourceFailure };

/** Loads `source` at `target` (its own ref or pin resolved, with `resolve`) in `dataDir`; a failure is a result. */
export async function loadAt(
  source: SourceConfig,
  target: ResolvedRef | 'resolve',
  dataDir: string,
): Promise<Loaded> {
  const opened = openSource(source, { dataDir });
  try {
    return { ok: true, index: await opened.index(target === 'resolve' ? await opened.resolve() : target) };
  } catch (error) {
    return { ok: false, failure: failureOf(source.id, error) };
  } finally {
    await opened.close();
  }
}

/** Runs `each` over `sources`, `concurrency` at a time, results in the order of `sources`. */
export async function eachSource<T>(
  sources: readonly SourceConfig[],
  concurrency: number,
  each: (source: SourceConfig) => Promise<T>,
): Promise<T[]> {
  const queue = new PQueue({ concurrency });
  return Promise.all(sources.map((source) => queue.add(() => each(source)) as Promise<T>));
}
