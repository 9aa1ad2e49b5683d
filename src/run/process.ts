import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { utf8Prefix } from '../shared/text.ts';
import { DRAIN_MS, KILL_GRACE_MS, MAX_STREAM_BYTES } from './limits.ts';

export interface ProcessSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Cancels the run: the group is ended as at the timeout. */
  signal?: AbortSignal;
  /** Another user to run as (the server is root): its uid and primary gid, supplementary groups dropped. */
  user?: { uid: number; gid: number };
}

export interface ProcessBounds {
  maxStreamBytes: number;
  killGraceMs: number;
  drainMs: number;
}

export interface ProcessResult {
  /** `null` when a signal ended it (or it never ended within the deadline). */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** A stream said more than `maxStreamBytes`: it is cut there. */
  truncated: boolean;
  timedOut: boolean;
  /** `signal` was aborted before the script ended: the group was ended for it. */
  cancelled: boolean;
  durationMs: number;
}

/** The process could not be started at all (the interpreter is gone, the folder is gone). */
export class SpawnError extends Error {
  constructor(readonly code: string) {
    super(`the process could not be started (${code})`);
    this.name = 'SpawnError';
  }
}

/** Keeps the first `max` bytes of a stream and reads (and drops) the rest, so the writer never blocks. */
function capture(stream: Readable, max: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let cut = false;
  stream.on('data', (chunk: Buffer) => {
    const room = max - kept;
    if (chunk.byteLength > room) cut = true;
    if (room > 0) {
      const part = chunk.subarray(0, room);
      chunks.push(part);
      kept += part.byteLength;
    }
  });
  const closed = new Promise<void>((resolve) => stream.once('close', () => resolve()));
  stream.on('error', () => undefined);
  return {
    closed,
    text(): { text: string; cut: boolean } {
      const bytes = Buffer.concat(chunks);
      return { text: new TextDecoder().decode(cut ? utf8Prefix(bytes, max) : bytes), cut };
    },
  };
}

/** A wait that can be called off, so no timer outlives the run. */
function wait(ms: number): { done: Promise<void>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return { done, cancel: () => clearTimeout(timer) };
}

/** Starts the script; a start refused at once (EPERM for another user) throws as a later one does. */
function start(spec: ProcessSpec) {
  try {
    return spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
      uid: spec.user?.uid,
      gid: spec.user?.gid,
    });
  } catch (error) {
    throw new SpawnError((error as NodeJS.ErrnoException).code ?? 'error');
  }
}

/**
 * Runs one script as an argv (no shell) in a process group of its own, and always returns: at the timeout, or
 * when `signal` is aborted, the group gets SIGTERM, then SIGKILL after a grace; once the script has exited,
 * whatever is left of its group is killed and its pipes get `drainMs` to close. A grandchild that left the
 * group and holds the pipes cannot hold the call: nothing waits past the stop + grace + drain.
 */
export async function runProcess(
  spec: ProcessSpec,
  bounds: ProcessBounds = { maxStreamBytes: MAX_STREAM_BYTES, killGraceMs: KILL_GRACE_MS, drainMs: DRAIN_MS },
  onSpawn?: () => void,
): Promise<ProcessResult> {
  const started = performance.now();
  const child = start(spec);
  const stdout = capture(child.stdout, bounds.maxStreamBytes);
  const stderr = capture(child.stderr, bounds.maxStreamBytes);
  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  const ended = new Promise<{ code: number | null; signal: string | null } | { error: string }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? 'error' }));
  });
  child.once('spawn', () => onSpawn?.());
  // Why the run was stopped, if it was: by the first of the timeout and the cancellation.
  let stopped: 'timeout' | 'cancel' | undefined;
  let kill: NodeJS.Timeout | undefined;
  let giveUp: ReturnType<typeof wait> | undefined;
  let resolveGaveUp: (value: undefined) => void = () => undefined;
  // A process that ignores even SIGKILL (uninterruptible I/O) still cannot hold the call.
  const gaveUp = new Promise<undefined>((resolve) => (resolveGaveUp = resolve));
  const stop = (why: 'timeout' | 'cancel') => {
    if (stopped !== undefined) return;
    stopped = why;
    signalGroup('SIGTERM');
    kill = setTimeout(() => signalGroup('SIGKILL'), bounds.killGraceMs);
    giveUp = wait(bounds.killGraceMs + bounds.drainMs);
    void giveUp.done.then(() => resolveGaveUp(undefined));
  };
  const timer = setTimeout(() => stop('timeout'), spec.timeoutMs);
  const cancel = () => stop('cancel');
  if (spec.signal?.aborted === true) cancel();
  else spec.signal?.addEventListener('abort', cancel, { once: true });
  const outcome = await Promise.race([ended, gaveUp]);
  spec.signal?.removeEventListener('abort', cancel);
  clearTimeout(timer);
  clearTimeout(kill);
  giveUp?.cancel();
  if (outcome !== undefined && 'error' in outcome) throw new SpawnError(outcome.error);
  const durationMs = Math.round(performance.now() - started);
  // The run is over: what is left of its group ends with it.
  signalGroup('SIGKILL');
  const drain = wait(bounds.drainMs);
  await Promise.race([Promise.all([stdout.closed, stderr.closed]), drain.done]);
  drain.cancel();
  child.stdout.destroy();
  child.stderr.destroy();
  const out = stdout.text();
  const err = stderr.text();
  return {
    exitCode: outcome?.code ?? null,
    signal: outcome?.signal ?? null,
    stdout: out.text,
    stderr: err.text,
    truncated: out.cut || err.cut,
    timedOut: stopped === 'timeout',
    cancelled: stopped === 'cancel',
    durationMs,
  };
}
