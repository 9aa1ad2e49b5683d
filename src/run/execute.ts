import { randomBytes } from 'node:crypto';
import { promises as fsp, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CatalogReader } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { scriptEnvironment } from './environment.ts';
import type { RunIdentity, RunUser } from './identity.ts';
import type { Materialiser } from './materialise.ts';
import type { Prepared, RunRefusal } from './plan.ts';
import type { WillRun } from './preview.ts';
import { runProcess, SpawnError, type ProcessBounds, type ProcessResult } from './process.ts';

export interface RunOutcome extends ProcessResult {
  /** Whether the skill's folder was written for this run (`cold`), checked (`warm`) or found changed. */
  materialised: 'warm' | 'cold' | 'replaced';
  /** From the confirmed call to the process having started. */
  startMs: number;
}

export type ScriptRunResult = { ok: true; outcome: RunOutcome } | { ok: false; refusal: RunRefusal };

/** True when every folder above `dir` that exists lets other users through. */
function reachable(dir: string): boolean {
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    const stat = statSync(parent, { throwIfNoEntry: false });
    if (stat !== undefined && (stat.mode & 0o001) === 0) return false;
    if (parent === path.dirname(parent)) return true;
  }
}

/**
 * Where another user's scripts find their files: `dir` when that user can get there (its root is then open to
 * that user's group alone), else a folder of a temp dir it can reach (a private dataDir or TMPDIR cannot be).
 */
export function sharedRoot(dir: string): string {
  const name = `skillpin-run-${randomBytes(12).toString('hex')}`;
  const candidates = [dir, path.join(os.tmpdir(), name), path.join('/tmp', name)];
  return candidates.find(reachable) ?? dir;
}

/** A temp folder owned by `user` alone (mode 0700), for one run. */
async function ownTempDir(root: string, user: { uid: number; gid: number }): Promise<string> {
  const dir = await fsp.mkdtemp(path.join(root, '.tmp-'));
  await fsp.chown(dir, user.uid, user.gid);
  return dir;
}

/** What every log line of a run names. */
const whereOf = (willRun: WillRun) => ({
  source: willRun.source,
  commit: willRun.commit,
  skill: willRun.skill,
  script: willRun.script,
});

export interface ExecutorOptions {
  identity: RunIdentity;
  /** Scripts run as this user, when not as the server's. */
  other: RunUser | undefined;
  /** Where skills are materialised and other users' temp folders go. */
  root: string;
  files: Materialiser;
  env: NodeJS.ProcessEnv;
  bounds: ProcessBounds | undefined;
  catalog: CatalogReader;
  logger: Logger;
}

export interface Executor {
  /** A script is running: one at a time. */
  readonly busy: boolean;
  /** What a call cancelled before its script started answers (nothing starts; its one log line says so). */
  cancelledBeforeStart(willRun: WillRun, token: 'still good' | 'spent'): ScriptRunResult;
  /** skill_run's last step: materialise the skill from the commit, then run the confirmed script once. */
  execute(prepared: Prepared, calledAt: number, signal?: AbortSignal): Promise<ScriptRunResult>;
}

/** A run cancelled before its script started: nothing starts, and its one log line says so. */
function cancelledBeforeStart(
  logger: Logger,
  willRun: WillRun,
  token: 'still good' | 'spent',
): ScriptRunResult {
  logger.info({ ...whereOf(willRun), cancelled: true }, 'skill_run: cancelled before the script started');
  return {
    ok: false,
    refusal: {
      code: 'run-cancelled',
      detail: `the request was cancelled before the script started; nothing ran (the token is ${token})`,
    },
  };
}

/** Why a run failed once under way: its user could not be taken, its interpreter not started, or its skill not written. */
function failedRun(error: unknown, willRun: WillRun, other: RunUser | undefined): ScriptRunResult {
  if (error instanceof SpawnError && error.code === 'EPERM' && other !== undefined) {
    const detail = `the script could not be started as user ${other.name} (uid ${other.uid}): EPERM`;
    return { ok: false, refusal: { code: 'run-user-unavailable', detail } };
  }
  const detail =
    error instanceof SpawnError
      ? `the ${willRun.interpreter} process could not be started (${error.code})`
      : 'the skill could not be materialised from the commit (see the server log)';
  return { ok: false, refusal: { code: 'run-failed', detail } };
}

/** Runs the confirmed script once in its materialised folder, logging its start and its end. */
async function spawnScript(
  options: ExecutorOptions,
  willRun: WillRun,
  env: Record<string, string>,
  calledAt: number,
  signal: AbortSignal | undefined,
): Promise<{ result: ProcessResult; startMs: number }> {
  const { logger } = options;
  const where = whereOf(willRun);
  let startMs = 0;
  logger.info({ ...where, digest: willRun.digest, args: willRun.argv.length - 1 }, 'skill_run: starting');
  const result = await runProcess(
    {
      command: willRun.interpreterPath,
      args: [path.join(willRun.cwd, ...willRun.script.split('/')), ...willRun.argv.slice(1)],
      cwd: willRun.cwd,
      env,
      timeoutMs: willRun.timeoutMs,
      signal,
      user: options.other,
    },
    options.bounds,
    () => (startMs = performance.now() - calledAt),
  );
  logger.info(
    {
      ...where,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      cancelled: result.cancelled,
      ms: result.durationMs,
    },
    result.cancelled ? 'skill_run: cancelled' : 'skill_run: finished',
  );
  return { result, startMs };
}

/** skill_run's last step: materialise the skill from the commit, then run the confirmed script once. */
async function runOnce(
  options: ExecutorOptions,
  prepared: Prepared,
  calledAt: number,
  signal: AbortSignal | undefined,
): Promise<ScriptRunResult> {
  const { identity, other, files, catalog, logger } = options;
  const { served, willRun } = prepared;
  const where = whereOf(willRun);
  if (identity.state === 'unavailable')
    return { ok: false, refusal: { code: 'run-user-unavailable', detail: identity.detail } };
  let tmp: string | undefined;
  try {
    await files.prune((source, commit) => catalog.namespace(source, commit) !== undefined);
    const materialised = await files.ensure(served);
    if (materialised === 'replaced')
      logger.warn(where, 'the materialised skill had changed on disk; it was written again from git');
    if (signal?.aborted === true) return cancelledBeforeStart(logger, willRun, 'spent');
    const { env } = scriptEnvironment(prepared.granted, options.env);
    // Another user gets a temp folder of its own, removed after the run.
    if (other !== undefined) env.TMPDIR = tmp = await ownTempDir(options.root, other);
    const { result, startMs } = await spawnScript(options, willRun, env, calledAt, signal);
    return { ok: true, outcome: { ...result, materialised, startMs } };
  } catch (error) {
    logger.error({ ...where, err: messageOf(error) }, 'skill_run failed');
    return failedRun(error, willRun, other);
  } finally {
    if (tmp !== undefined) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

export function createExecutor(options: ExecutorOptions): Executor {
  // The one run going on, if any: set and cleared in one assignment each.
  let running: Promise<unknown> | undefined;
  return {
    get busy() {
      return running !== undefined;
    },
    cancelledBeforeStart: (willRun, token) => cancelledBeforeStart(options.logger, willRun, token),
    async execute(prepared, calledAt, signal) {
      const run = runOnce(options, prepared, calledAt, signal);
      running = run;
      try {
        return await run;
      } finally {
        running = undefined;
      }
    },
  };
}
