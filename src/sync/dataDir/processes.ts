import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Config, SourceConfig } from '../../config/index.ts';
import { type DamagedFile, type Holder, holderAlive, readHolderFile } from './lease.ts';
import { sourceOrigin } from '../../catalog/index.ts';

/** What makes two processes' sources of one id the same source: they share its lease, store and state. */
export interface SourceDefinition {
  repository: string;
  /** The ref followed, or the commit pinned. */
  target: string;
  paths: string[];
  strictNames: boolean;
  verify: string | null;
}

/** A process using a dataDir: `dataDir/processes/<host>.<pid>.json`, written by it, removed when it ends. */
export interface ProcessRecord extends Holder {
  command: 'serve' | 'sync';
  transport: 'stdio' | 'http' | null;
  /** The config file it was started with. */
  config: string;
  sources: Record<string, SourceDefinition>;
  /** The commits it serves now (listed and retained), per source: retention keeps them. */
  served: Record<string, string[]>;
}

/** A process file lists the sources of one config and the commits it serves: far less than this. */
export const PROCESS_FILE_MAX_BYTES = 16 * 1024 * 1024;

export const processesDir = (dataDir: string) => path.join(dataDir, 'processes');
export const processFile = (dataDir: string, holder: Holder) =>
  path.join(processesDir(dataDir), `${holder.host}.${holder.pid}.${holder.nonce}.json`);

export function definitionOf(source: SourceConfig): SourceDefinition {
  const { location, target } = source;
  return {
    repository: location.kind === 'remote' ? sourceOrigin(source).repository : location.path,
    target:
      target.kind === 'ref'
        ? `ref ${target.ref}`
        : target.kind === 'refs'
          ? `refs ${target.patterns.join(', ')}`
          : `commit ${target.commit}`,
    paths: source.paths,
    strictNames: source.strictNames,
    verify: source.verify?.require ?? null,
  };
}

export const definitionsOf = (config: Config): Record<string, SourceDefinition> =>
  Object.fromEntries(config.sources.map((source) => [source.id, definitionOf(source)]));

/**
 * The processes using `dataDir` now; the files of processes that are gone (or stopped renewing them) are removed on
 * the way. A damaged file (too large, not a regular file, not a process's JSON) is told to `damaged` and left: it is
 * no process's to replace.
 */
export function liveProcesses(dataDir: string, damaged?: (file: DamagedFile) => void): ProcessRecord[] {
  const dir = processesDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const file = path.join(dir, name);
    const read = readHolderFile<ProcessRecord>(file, PROCESS_FILE_MAX_BYTES);
    if (read === undefined) return [];
    if ('damaged' in read) {
      damaged?.(read.damaged);
      return [];
    }
    const { sources, served } = read.holder;
    if (typeof sources !== 'object' || sources === null || typeof served !== 'object' || served === null) {
      damaged?.({
        file,
        reason: 'datadir-file-damaged',
        detail: 'not a process file (no sources, served)',
      });
      return [];
    }
    if (holderAlive(read.holder, file)) return [read.holder];
    rmSync(file, { force: true });
    return [];
  });
}

/** Two processes define one source id differently: they cannot share it. */
export class DataDirConflictError extends Error {
  constructor(
    dataDir: string,
    id: string,
    mine: { config: string; def: SourceDefinition },
    other: ProcessRecord,
  ) {
    const theirs = other.sources[id]!;
    const what = (def: SourceDefinition) =>
      `${def.repository} (${[def.target, ...def.paths.map((p) => `path ${p}`), def.strictNames ? 'strictNames' : '', def.verify === null ? '' : `verify ${def.verify}`].filter(Boolean).join(', ')})`;
    super(
      `dataDir ${dataDir} is shared with skillpin ${other.command} (pid ${other.pid}, config ${other.config}), ` +
        `whose source "${id}" is ${what(theirs)}; in ${mine.config} it is ${what(mine.def)}. ` +
        'Processes on one dataDir share a source id only when it names the same repository, ref or commit, paths ' +
        'and verification: give one of them another id, or another dataDir',
    );
    this.name = 'DataDirConflictError';
  }
}

/** Throws DataDirConflictError when a live process other than `self` defines one of `config`'s sources otherwise. */
export function checkShared(
  dataDir: string,
  config: Config,
  self: Holder,
  damaged?: (file: DamagedFile) => void,
): void {
  for (const other of liveProcesses(dataDir, damaged)) {
    if (other.nonce === self.nonce) continue;
    for (const source of config.sources) {
      const theirs = other.sources[source.id];
      const def = definitionOf(source);
      if (theirs !== undefined && !isDeepStrictEqual(theirs, def))
        throw new DataDirConflictError(dataDir, source.id, { config: config.file, def }, other);
    }
  }
}
