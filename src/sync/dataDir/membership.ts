import { renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/index.ts';
import { isOsError, makeDirectorySync } from '../../shared/fs.ts';
import type { Logger } from '../../shared/log.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import {
  type DamagedFile,
  HOLDER_REFRESH_MS,
  HOLDER_STALE_MS,
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
import { DataDirUnusableError } from './unusable.ts';

/** One process (one worker) using a dataDir beside others: its process file and the source leases it holds. */
export interface Membership {
  readonly dataDir: string;
  readonly holder: Holder;
  readonly role: Role;
  /** The lease whose holder syncs source `id` (its own id; a ref of a `refs:` source: its group's, see groupLease.ts). */
  leaseOf(id: string): string;
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
 * Renews this process's files (their modification time is the heartbeat the others look at): the process file,
 * written again by `rewrite` when something removed it, and the leases held (one gone was taken over: the next
 * sync finds it is no longer held).
 */
function renew(file: string, leases: string[], rewrite: () => void): void {
  const now = new Date();
  try {
    utimesSync(file, now, now);
  } catch {
    try {
      rewrite();
    } catch {
      // A full disk: the next renewal tries again.
    }
  }
  for (const lease of leases)
    try {
      utimesSync(lease, now, now);
    } catch {
      // Gone or replaced: whoever replaced it holds it now.
    }
}

/** Logs each damaged file of the dataDir once per process (it is looked at on every sync). */
function damageReporter(logger: Logger): (damage: DamagedFile) => void {
  const told = new Set<string>();
  return ({ file, reason, detail }) => {
    if (told.has(`${file} ${reason}`)) return;
    told.add(`${file} ${reason}`);
    logger.warn({ file, reason }, `a file of the dataDir is damaged and not used: ${file}: ${detail}`);
  };
}

/** Says why a lease was taken over: its holder is gone or did not renew it, or the file was no lease. */
function logTakeover(logger: Logger, id: string, taken: Taken & { ours: true }): void {
  const { from, why, damaged } = taken;
  if (damaged !== undefined)
    logger.warn(
      { source: id, reason: damaged.reason, file: damaged.file },
      `took over the lease of source ${id}: its file was damaged (${damaged.detail})`,
    );
  if (from === undefined) return;
  const gone =
    why === 'lease-not-renewed'
      ? `its holder (pid ${from.pid}) did not renew it for ${HOLDER_STALE_MS / 1000} s`
      : `its holder (pid ${from.pid}) is gone`;
  logger.warn(
    { source: id, reason: why, from: { pid: from.pid, host: from.host, since: from.since } },
    `took over the lease of source ${id}: ${gone}`,
  );
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
  const damaged = damageReporter(logger);
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
    checkShared(dataDir, config, holder, damaged);
    writeWhole(file, record);
  } catch (error) {
    leftHere(holder);
    throw isOsError(error) ? new DataDirUnusableError(dataDir, config.dataDirFrom, error) : error;
  }
  const stamp = { ...holder, command: role.command, transport: record.transport, config: config.file };
  let stopTouching = () => {};
  const touchLater = () => {
    stopTouching = clock.after(HOLDER_REFRESH_MS, () => {
      renew(
        file,
        [...held].map((id) => leaseFile(dataDir, id)),
        () => writeWhole(file, record),
      );
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
    leaseOf: (id) => id,
    lease(id) {
      const taken = takeLease(leaseFile(dataDir, id), stamp);
      if (!taken.ours) return taken;
      held.add(id);
      logTakeover(logger, id, taken);
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
      const others = liveProcesses(dataDir, damaged).filter((other) => other.nonce !== holder.nonce);
      return new Set(others.flatMap((other) => other.served[id] ?? []));
    },
    reconfigure(next) {
      checkShared(dataDir, next, holder, damaged);
      record = { ...record, sources: definitionsOf(next) };
      writeWhole(file, record);
    },
    leave,
  };
}

/** Who holds source `id`'s lease in `dataDir`, if anyone (status). */
export const leaseHolder = (dataDir: string, id: string) =>
  readHolder<Holder & { command?: string; transport?: string | null }>(leaseFile(dataDir, id));
