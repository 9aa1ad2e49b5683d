import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { DEFAULT_GIT_MEMORY_BYTES, LOCAL_DEADLINE_MS } from '../limits.ts';
import { childEnv, type ChildSettings } from './env.ts';

/** The most of a child's stdout kept (ls-remote, rev-parse, for-each-ref answers are small). */
const MAX_STDOUT = 64 * 1024 * 1024;
/** The tail of stderr kept for the error message. */
const MAX_STDERR = 64 * 1024;

/**
 * Every git child starts through this shell, as `sh -c WRAPPER git <KiB> <args>`:
 * - SIGXFSZ ignored, as Node ignores it: a write past the file-size limit then fails with EFBIG and git says so
 *   ("File too large"); with the default a spawn gives back, index-pack dies without a word.
 * - Its address space bounded (`ulimit -v`): the processes git starts (git-remote-http, index-pack) inherit it.
 * - A watcher in the child's process group that reads fd 3 until end-of-file, then kills the whole group. We hold
 *   the other end: it closes when the child has ended, when we kill it, and when this process dies however it
 *   dies (kill -9 included), so no git outlives us. git itself gets no fd 3.
 */
const WRAPPER = `trap '' XFSZ; ulimit -v "$1" 2>/dev/null; shift; { read -r _ <&3; kill -9 0; } </dev/null >/dev/null 2>&1 & exec "$0" "$@" 3<&-`;

export interface SpawnOptions extends ChildSettings {
  /** The address space git (and each process it starts) may take; absent: DEFAULT_GIT_MEMORY_BYTES. */
  maxMemoryBytes?: number;
}

/**
 * Starts `git <args>` through WRAPPER in a session of its own (setsid): no controlling terminal, so nothing it
 * starts (ssh, a credential helper) can prompt, and `process.kill(-pid)` ends the whole group.
 */
export function spawnGit(
  git: string,
  args: readonly string[],
  options: SpawnOptions = {},
): ChildProcessWithoutNullStreams {
  const memory = options.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES;
  const child = spawn('/bin/sh', ['-c', WRAPPER, git, String(Math.floor(memory / 1024)), ...args], {
    env: childEnv(process.env, {
      ...options,
      // Packs are mapped into the address space: a quarter of it for them, in windows of a sixteenth.
      config: [
        ['core.packedGitLimit', String(Math.floor(memory / 4))],
        ['core.packedGitWindowSize', String(Math.floor(memory / 16))],
        ...(options.config ?? []),
      ],
      // glibc reserves 64 MiB of address space for each thread's arena: two are shared instead.
      vars: { MALLOC_ARENA_MAX: '2', ...options.vars },
    }),
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const watcher = child.stdio[3] as Readable;
  watcher.on('error', () => undefined);
  // Once the child ended, the watcher takes whatever it left running with it.
  child.once('exit', () => watcher.destroy());
  return child as ChildProcessWithoutNullStreams;
}

/** Kills the child's whole process group (the child, what it started, the watcher). */
export function killGroup(child: { pid?: number | undefined }): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Resolves once no process is left in the group of `pid` (polled; at most a second). */
async function groupEnded(pid: number | undefined): Promise<void> {
  for (let waited = 0; pid !== undefined && waited < 1000; waited += 5) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface RunOptions extends SpawnOptions {
  input?: string;
  /** No byte on stdout or stderr for this long kills the child (and its helpers): `stopped: 'idle'`. */
  idleTimeoutMs?: number;
  /**
   * The child still running this long after it started is killed, however it moves: `stopped: 'deadline'`.
   * Absent: LOCAL_DEADLINE_MS.
   */
  deadlineMs?: number;
  /** Aborting kills the child: `stopped: 'aborted'` (a fetch over its byte limit). */
  signal?: AbortSignal;
  /** Aborting kills the child: `stopped: 'closed'` (its repository was closed). */
  closing?: AbortSignal;
  /** Each stderr line as it comes (progress rewrites its line with `\r`: each rewrite is a line). */
  onStderrLine?: (line: string) => void;
  /**
   * Each stdout chunk as it comes, instead of keeping stdout (the result's `stdout` is then empty): returning
   * `false` kills the child (`stopped: 'output'`), and no later chunk is passed on.
   */
  onStdout?: (chunk: Buffer) => boolean;
}

export interface GitRunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Why we killed the child, when we did. */
  stopped?: 'idle' | 'deadline' | 'aborted' | 'output' | 'closed';
}

/** `git <args>` run in one repository, its options added to the repository's own (see `runGit`). */
export type Git = (args: string[], options?: RunOptions) => Promise<GitRunResult>;

/** Runs `git <args>` to its end (see spawnGit); a timeout, an abort or a close kills its whole group. */
export function runGit(
  git: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<GitRunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(git, args, options);
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let partial = '';
    let stopped: GitRunResult['stopped'];
    let idleTimer: NodeJS.Timeout | undefined;
    const stop = (why: NonNullable<GitRunResult['stopped']>) => {
      stopped ??= why;
      killGroup(child);
    };
    const idle = () => {
      if (options.idleTimeoutMs === undefined) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => stop('idle'), options.idleTimeoutMs);
    };
    const deadline = setTimeout(() => stop('deadline'), options.deadlineMs ?? LOCAL_DEADLINE_MS);
    const abort = () => stop('aborted');
    const close = () => stop('closed');
    if (options.signal?.aborted) abort();
    if (options.closing?.aborted) close();
    options.signal?.addEventListener('abort', abort, { once: true });
    options.closing?.addEventListener('abort', close, { once: true });
    const done = () => {
      clearTimeout(idleTimer);
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', abort);
      options.closing?.removeEventListener('abort', close);
    };
    idle();
    child.stdout.on('data', (chunk: Buffer) => {
      idle();
      if (options.onStdout !== undefined) {
        if (stopped === undefined && !options.onStdout(chunk)) stop('output');
        return;
      }
      outBytes += chunk.length;
      if (outBytes > MAX_STDOUT) {
        stop('output');
        return;
      }
      out.push(chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      idle();
      stderr = (stderr + chunk).slice(-MAX_STDERR);
      if (options.onStderrLine === undefined) return;
      const lines = (partial + chunk).split(/[\r\n]/);
      partial = lines.pop()!;
      for (const line of lines) if (line !== '') options.onStderrLine(line);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
    child.once('error', (error) => {
      done();
      reject(error);
    });
    child.once('close', (code) => {
      done();
      const result = { code, stdout: Buffer.concat(out), stderr, stopped };
      // A child we killed is reported once nothing of its group is left (its watcher ends a moment after it).
      if (stopped === undefined) resolve(result);
      else void groupEnded(child.pid).then(() => resolve(result));
    });
  });
}
