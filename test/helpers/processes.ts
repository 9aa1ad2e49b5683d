import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the processes whose command line holds `part` (Linux: read from /proc). */
export function pidsRunning(part: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.some((arg) => arg.includes(part))) pids.push(Number(name));
    } catch {
      // It ended while the folder was read.
    }
  }
  return pids;
}

/** No process is left in the process group `pgid`. */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
