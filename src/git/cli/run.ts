import { spawn } from 'node:child_process';
import { childEnv, type ChildSettings } from './env.ts';

/** The most of a child's stdout kept (ls-remote, rev-parse, for-each-ref answers are small). */
const MAX_STDOUT = 64 * 1024 * 1024;
/** The tail of stderr kept for the error message. */
const MAX_STDERR = 64 * 1024;

export interface RunOptions extends ChildSettings {
  input?: string;
  /** No byte on stdout or stderr for this long kills the child (and its helpers): `stopped: 'idle'`. */
  idleTimeoutMs?: number;
  /** The child still running this long after it started is killed, however it moves: `stopped: 'deadline'`. */
  deadlineMs?: number;
  /** Aborting kills the child: `stopped: 'aborted'` (a fetch over its byte limit). */
  signal?: AbortSignal;
  /** Each stderr line as it comes (progress rewrites its line with `\r`: each rewrite is a line). */
  onStderrLine?: (line: string) => void;
  /**
   * Each stdout chunk as it comes, instead of keeping stdout (the result's `stdout` is then empty): returning
   * `false` kills the child (`stopped: 'output'`), and no later chunk is passed on.
   */
  onStdout?: (chunk: Buffer) => boolean;
  /** `false` for a command that writes no file (ls-tree): it is started directly, without IGNORING_SIGXFSZ. */
  writesFiles?: boolean;
}

export interface RunResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Why we killed the child, when we did. */
  stopped?: 'idle' | 'deadline' | 'aborted' | 'output';
}

/**
 * Starts `$0 "$@"` with SIGXFSZ ignored, as Node ignores it: a write past the file-size limit then fails with
 * EFBIG and git says so ("File too large"). The child of a spawn gets the default back, which kills git (its
 * index-pack) without a word, and fetch-pack reports a bad pack.
 */
const IGNORING_SIGXFSZ = `trap '' XFSZ; exec "$0" "$@"`;

/**
 * Runs `git <args>` to its end. The child gets its own session (setsid): no controlling terminal, so nothing it
 * starts (ssh, a credential helper) can prompt, and a timeout kills the whole group.
 */
export function runGit(git: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Each process costs a fork of this one: one that writes no file is spared the shell.
    const [command, argv] =
      options.writesFiles === false ? [git, args] : ['/bin/sh', ['-c', IGNORING_SIGXFSZ, git, ...args]];
    const child = spawn(command, argv, {
      env: childEnv(process.env, options),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = '';
    let partial = '';
    let stopped: RunResult['stopped'];
    let idleTimer: NodeJS.Timeout | undefined;
    const stop = (why: NonNullable<RunResult['stopped']>) => {
      stopped ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const idle = () => {
      if (options.idleTimeoutMs === undefined) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => stop('idle'), options.idleTimeoutMs);
    };
    const deadline =
      options.deadlineMs === undefined ? undefined : setTimeout(() => stop('deadline'), options.deadlineMs);
    const abort = () => stop('aborted');
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    const done = () => {
      clearTimeout(idleTimer);
      clearTimeout(deadline);
      options.signal?.removeEventListener('abort', abort);
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
      resolve({ code, stdout: Buffer.concat(out), stderr, ...(stopped === undefined ? {} : { stopped }) });
    });
  });
}
