import os from 'node:os';
import type { Config } from '../config/index.ts';
import { dataDirHolder } from '../sync/lock.ts';

export const RELOAD_EXIT = { sent: 0, nobody: 1, usage: 2 } as const;

/**
 * `skillpin reload`: the config is valid (it was loaded to get here), so the `skillpin serve` holding its dataDir
 * is sent SIGHUP and re-reads the config it was started with: added, removed and changed sources in one swap.
 */
export function reload(
  config: Config,
  io: { out: (text: string) => void; err: (text: string) => void },
  signal: (pid: number, name: NodeJS.Signals) => void = (pid, name) => void process.kill(pid, name),
): number {
  const holder = dataDirHolder(config.dataDir);
  if (holder === undefined) {
    io.err(
      `skillpin reload: no skillpin process holds ${config.dataDir}; nothing to reload (skillpin serve starts one)\n`,
    );
    return RELOAD_EXIT.nobody;
  }
  if (holder.host !== os.hostname()) {
    io.err(
      `skillpin reload: ${config.dataDir} is held by pid ${holder.pid} on host ${holder.host}; run reload there\n`,
    );
    return RELOAD_EXIT.usage;
  }
  if (holder.command !== 'serve') {
    io.err(
      `skillpin reload: ${config.dataDir} is held by skillpin ${holder.command} (pid ${holder.pid}), which does not reload; only serve does\n`,
    );
    return RELOAD_EXIT.nobody;
  }
  signal(holder.pid, 'SIGHUP');
  io.out(
    `sent SIGHUP to skillpin serve (pid ${holder.pid}): it re-reads the config it was started with; its log says what changed\n`,
  );
  return RELOAD_EXIT.sent;
}
