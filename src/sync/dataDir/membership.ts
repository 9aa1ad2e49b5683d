import { renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import { makeDirectorySync } from '../../shared/fs.ts';
import type { Logger } from '../../shared/log.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import {
  HOLDER_REFRESH_MS,
  type Holder,
  holdsLease,
  leftHere,
  newHolder,
  readHolder,
  releaseLease,
  type Taken,
  takeLease,
} from './lease.ts';
import { checkShared, definitionsOf, liveProcesses, processFile, type ProcessRecord } from './processes.ts';
import { DataDirUnusableError, isOsError } from './unusable.ts';

/** One process (one worker) using a dataDir beside others: its process file and the source leases it holds. */
export interface Membership {
  readonly dataDir: string;
  readonly holder: Holder;
  readonly role: Role;
  /** Takes source `id`'s lease (`dataDir/leases/<id>.json`); one taken over from a gone holder is logged. */
  lease(id: string): Taken;
  /** Whether source `id`'s lease still names this process. */
  holds(id: string): boolean;
  release(id: string): void;
  /** Records the commits this process serves now, per source, in its process file. */
  serving(served: Record<string, string[]>): void;
  /** Commits of source `id` that the other live processes serve. */
  servedElsewhere(id: string): Set<string>;
  /** Checks and records the sources of a config this process now runs; DataDirConflictError when another differs. */
  reconfigure(config: Config): void;
  /** Gives up every lease and removes the process file; also done when the process exits. */
  leave(): void;
}

export const leaseFile = (dataDir: string, id: string) => path.join(dataDir, 'leases', `${id}.json`);

/** What this process is doing: written into its process file and into the leases it takes. */
export interface Role {
  command: ProcessRecord['command'];
  transport?: 'stdio' | 'http';
}

function writeWhole(file: string, value: unknown): void {
  makeDirectorySync(path.dirname(file));
  const temp = `${file}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value)}\n`);
  renameSync(temp, file);
}

/**
 * Joins `config.dataDir`: refuses (DataDirConflictError) when a live process defines one of its sources
 * otherwise, then writes this process's file; DataDirUnusableError when dataDir cannot be created or written. Files are touched every HOLDER_REFRESH_MS for other hosts.
 */
export function joinDataDir(
  config: Config,
  role: Role,
  logger: Logger,
  clock: Clock = systemClock,
): Membership {
  const dataDir = path.resolve(config.dataDir);
  const holder = newHolder();
  const file = processFile(dataDir, holder);
  const held = new Set<string>();
  let record: ProcessRecord = {
    ...holder,
    command: role.command,
    transport: role.transport ?? null,
    config: config.file,
    sources: definitionsOf(config),
    served: {},
  };
  try {
    makeDirectorySync(dataDir);
    checkShared(dataDir, config, holder);
    writeWhole(file, record);
  } catch (error) {
    leftHere(holder);
    throw isOsError(error) ? new DataDirUnusableError(dataDir, config.dataDirFrom, error) : error;
  }
  const stamp = { ...holder, command: role.command, transport: record.transport, config: config.file };
  let stopTouching = () => {};
  const touchLater = () => {
    stopTouching = clock.after(HOLDER_REFRESH_MS, () => {
      const now = new Date(clock.now());
      for (const touched of [file, ...[...held].map((id) => leaseFile(dataDir, id))])
        try {
          utimesSync(touched, now, now);
        } catch {
          // Gone or replaced: whoever replaced it holds it now.
        }
      touchLater();
    });
  };
  touchLater();
  const leave = () => {
    stopTouching();
    process.off('exit', leave);
    for (const id of held) releaseLease(leaseFile(dataDir, id), holder);
    held.clear();
    rmSync(file, { force: true });
    leftHere(holder);
  };
  process.on('exit', leave);
  return {
    dataDir,
    holder,
    role,
    lease(id) {
      const taken = takeLease(leaseFile(dataDir, id), stamp);
      if (!taken.ours) return taken;
      held.add(id);
      if (taken.from !== undefined)
        logger.warn(
          { source: id, from: { pid: taken.from.pid, host: taken.from.host, since: taken.from.since } },
          `took over the lease of source ${id}: its holder (pid ${taken.from.pid}) is gone`,
        );
      return taken;
    },
    holds: (id) => held.has(id) && holdsLease(leaseFile(dataDir, id), holder),
    release(id) {
      if (held.delete(id)) releaseLease(leaseFile(dataDir, id), holder);
    },
    serving(served) {
      record = { ...record, served };
      writeWhole(file, record);
    },
    servedElsewhere(id) {
      const others = liveProcesses(dataDir).filter((other) => other.nonce !== holder.nonce);
      return new Set(others.flatMap((other) => other.served[id] ?? []));
    },
    reconfigure(next) {
      checkShared(dataDir, next, holder);
      record = { ...record, sources: definitionsOf(next) };
      writeWhole(file, record);
    },
    leave,
  };
}

/** Who holds source `id`'s lease in `dataDir`, if anyone (status). */
export const leaseHolder = (dataDir: string, id: string) =>
  readHolder<Holder & { command?: string; transport?: string | null }>(leaseFile(dataDir, id));
