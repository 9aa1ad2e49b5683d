import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { messageOf } from '../shared/text.ts';

/**
 * Whether this process's initial environment block is cleared. On Linux a process of the same uid (a script)
 * can read `/proc/<pid>/environ`: the block the kernel set up at exec, holding every secret the server was
 * started with, whatever `process.env` says later.
 */
export type EnvironStatus =
  | { state: 'scrubbed' }
  | { state: 'not-applicable'; detail: string }
  | { state: 'unscrubbed'; detail: string };

export interface ClearEnvironOptions {
  platform?: NodeJS.Platform;
  /** `/proc/self`, or in tests a folder that fails like a kernel that refuses. */
  proc?: string;
}

/** `env_start` and `env_end` of proc(5)'s stat: fields 50 and 51, counted after the parenthesised comm. */
function environBounds(stat: string): { start: number; end: number } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[47]);
  const end = Number(fields[48]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start <= 0 || end < start)
    return undefined;
  return { start, end };
}

/**
 * Clears the initial environment block in place (scripts get an allowlisted environment only): every variable is set
 * again first, so the C environment points at copies and `process.env` keeps every value; then the block is
 * overwritten with NULs through `/proc/self/mem` and read back. Run once at start, before any script.
 */
export function clearInitialEnviron(options: ClearEnvironOptions = {}): EnvironStatus {
  if ((options.platform ?? process.platform) !== 'linux')
    return { state: 'not-applicable', detail: 'no /proc/<pid>/environ on this platform' };
  const proc = options.proc ?? '/proc/self';
  const unscrubbed = (detail: string): EnvironStatus => ({ state: 'unscrubbed', detail });
  let bounds: ReturnType<typeof environBounds>;
  try {
    bounds = environBounds(readFileSync(path.join(proc, 'stat'), 'utf8'));
  } catch (error) {
    return unscrubbed(`cannot read ${proc}/stat: ${messageOf(error)}`);
  }
  if (bounds === undefined) return unscrubbed(`${proc}/stat does not give the environment block's bounds`);
  const before = { ...process.env };
  for (const [name, value] of Object.entries(before)) if (value !== undefined) process.env[name] = value;
  const length = bounds.end - bounds.start;
  try {
    const mem = openSync(path.join(proc, 'mem'), 'r+');
    try {
      if (writeSync(mem, Buffer.alloc(length), 0, length, bounds.start) !== length)
        return unscrubbed(`${proc}/mem took part of the write`);
    } finally {
      closeSync(mem);
    }
  } catch (error) {
    return unscrubbed(`cannot write ${proc}/mem: ${messageOf(error)}`);
  }
  let left: Buffer;
  try {
    left = readFileSync(path.join(proc, 'environ'));
  } catch (error) {
    return unscrubbed(`cannot read ${proc}/environ back: ${messageOf(error)}`);
  }
  if (left.some((byte) => byte !== 0)) return unscrubbed(`${proc}/environ still reads back variables`);
  const after = process.env;
  const kept = Object.entries(before).every(([name, value]) => after[name] === value);
  if (!kept || Object.keys(after).length !== Object.keys(before).length)
    return unscrubbed('process.env changed while the block was cleared');
  return { state: 'scrubbed' };
}
