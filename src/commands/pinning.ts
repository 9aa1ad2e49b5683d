import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PQueue from 'p-queue';
import type { SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { keyringOf, type ResolvedRef } from '../git/index.ts';
import type { CommitIndex } from '../index/index.ts';
import { lockedConfig, lockfilePath, readLockfile } from '../sync/lockfile.ts';
import { openSource } from '../sync/source.ts';
import { failureOf } from '../sync/step.ts';

/**
 * The config a command runs with: every `verify:` key file parsed (a bad one is a ConfigError, exit 2, before
 * anything runs), and with `locked` (or `lock:` in the config) every source pinned to its lockfile commit.
 */
export async function prepareConfig(config: Config, options: { locked?: boolean } = {}): Promise<Config> {
  await Promise.all(config.sources.map((source) => source.verify && keyringOf(source.verify)));
  if (options.locked !== true && config.lock === undefined) return config;
  const file = lockfilePath(config);
  return lockedConfig(config, readLockfile(file), file);
}

/** What loading one source at one commit gave: its index, or why it failed. */
export type Loaded = { ok: true; index: CommitIndex } | { ok: false; failure: SourceFailure };

/**
 * Runs `work` with a private dataDir in the temp folder, removed afterwards: `lock`, `update`, `diff` and `check`
 * never touch the config's dataDir, so they run beside a serving process.
 */
export async function withScratch<T>(work: (dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'skillpin-pin-'));
  try {
    return await work(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Loads `source` at each of `targets` in order (its ref resolved where a target is `resolve`), sharing one
 * store, so a later commit fetches only what the earlier ones lack. A failure is that target's result.
 */
export async function loadTargets(
  source: SourceConfig,
  targets: ReadonlyArray<ResolvedRef | 'resolve'>,
  dataDir: string,
): Promise<Loaded[]> {
  const opened = openSource(source, { dataDir });
  const results: Loaded[] = [];
  let have: string | undefined;
  try {
    for (const wanted of targets) {
      try {
        const target = wanted === 'resolve' ? await opened.resolve() : wanted;
        const ns = await opened.load(target, have);
        have = ns.commit;
        results.push({ ok: true, index: ns.index });
      } catch (error) {
        results.push({ ok: false, failure: failureOf(source.id, error) });
      }
    }
  } finally {
    await opened.close();
  }
  return results;
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
