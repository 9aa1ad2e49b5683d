import os from 'node:os';
import type { Config } from '../config/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { liveProcesses } from '../sync/dataDir/processes.ts';

/**
 * `skillpin reload`: the config is valid (it was loaded to get here), so every `skillpin serve` on this host that
 * runs it (from its dataDir's process files) is sent SIGHUP and re-reads it: added, removed and changed sources
 * in one swap.
 */
export function reload(
  config: Config,
  io: { out: (text: string) => void; err: (text: string) => void },
  signal: (pid: number, name: NodeJS.Signals) => void = (pid, name) => void process.kill(pid, name),
): ExitStatus {
  const servers = liveProcesses(config.dataDir).filter(
    (p) => p.command === 'serve' && p.config === config.file,
  );
  if (servers.length === 0) {
    io.err(
      `skillpin reload: no skillpin process holds ${config.dataDir}; nothing to reload (skillpin serve starts one)\n`,
    );
    return EXIT.unavailable;
  }
  const here = servers.filter((p) => p.host === os.hostname());
  if (here.length === 0) {
    const { pid, host } = servers[0]!;
    io.err(`skillpin reload: ${config.dataDir} is served by pid ${pid} on host ${host}; run reload there\n`);
    return EXIT.unavailable;
  }
  for (const { pid } of new Map(here.map((p) => [p.pid, p])).values()) {
    signal(pid, 'SIGHUP');
    io.out(
      `sent SIGHUP to skillpin serve (pid ${pid}): it re-reads the config it was started with; its log says what changed\n`,
    );
  }
  return EXIT.ok;
}
