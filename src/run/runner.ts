import { randomBytes } from 'node:crypto';
import { promises as fsp, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CatalogReader, CatalogSkill, FileReader, Namespace } from '../catalog/index.ts';
import type { RunGrants, RunSettings } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { Reason, SkillProblem } from '../shared/reasons.ts';
import { compareText, messageOf } from '../shared/text.ts';
import type { EnvironStatus } from './environ.ts';
import { scriptEnvironment } from './environment.ts';
import { type RunIdentity, runIdentity } from './identity.ts';
import { interpretersOf } from './interpreters.ts';
import { DEFAULT_TIMEOUT_MS, MAX_ARGS, MAX_ARGS_BYTES, MAX_TIMEOUT_MS } from './limits.ts';
import { materialiser } from './materialise.ts';
import { type NamespacePlan, type PlannedScript, planNamespace } from './plan.ts';
import type { WillRun } from './preview.ts';
import { runProcess, SpawnError, type ProcessBounds, type ProcessResult } from './process.ts';
import { tokenBook, type TokenRefusal } from './tokens.ts';

/** Why skill_run did not run a script: a stable code, the reason code when one applies, and a sentence. */
export interface Refusal {
  code:
    | 'SKILL_NOT_FOUND'
    | 'NOT_DECLARED'
    | 'NOT_GRANTED'
    | 'UNAVAILABLE'
    | 'INVALID_ARGS'
    | 'CONFIRMATION_UNAVAILABLE'
    | 'RUN_BUSY'
    | 'RUN_FAILED'
    | 'CANCELLED'
    | 'RUN_USER_UNAVAILABLE'
    | TokenRefusal['code'];
  reason?: Reason;
  detail: string;
}

/** A run that may be confirmed: what the preview shows, and what starts when it is. */
export interface Prepared {
  served: CatalogSkill;
  willRun: WillRun;
  /** The variables granted and declared: what the script's environment is built from. */
  granted: readonly string[];
}

export interface RunOutcome extends ProcessResult {
  /** Whether the skill's folder was written for this run (`cold`), checked (`warm`) or found changed. */
  materialised: 'warm' | 'cold' | 'replaced';
  /** From the confirmed call to the process having started. */
  startMs: number;
}

export type Prepare = { ok: true; prepared: Prepared } | { ok: false; refusal: Refusal };
export type RunResult = { ok: true; outcome: RunOutcome } | { ok: false; refusal: Refusal };

export interface Runner {
  /** Some source grants some script: skill_run is served. */
  readonly enabled: boolean;
  readonly settings: RunSettings;
  /** The declared scripts of a served skill and what became of each here; `undefined` when it declares none. */
  scriptsOf(served: CatalogSkill): readonly PlannedScript[] | undefined;
  /** Grant lines of this commit that grant nothing, and a deployment that runs nothing. */
  problemsOf(ns: Namespace): readonly SkillProblem[];
  /** The preview of running `script` of `served` with `args`, or why it cannot run. Starts nothing. */
  prepare(served: CatalogSkill, script: string, args: readonly string[]): Prepare;
  /** A confirmation token bound to the preview. */
  issue(prepared: Prepared): { token: string; expiresAt: number };
  /**
   * Runs the prepared script once, if `token` confirms exactly this preview and no other run is going on.
   * Aborting `signal` ends the script as its timeout does; aborted before the script starts, nothing starts.
   */
  run(prepared: Prepared, token: string, signal?: AbortSignal): Promise<RunResult>;
}

export interface RunnerOptions {
  /** The owner's grants, by source id. */
  grants: ReadonlyMap<string, RunGrants>;
  settings: RunSettings;
  /** A folder of its own (dataDir/run): emptied at first use, then one read-only folder per skill run. */
  dir: string;
  environ: EnvironStatus;
  /** The environment scripts' allowlisted variables come from; default the process's. */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  bounds?: ProcessBounds;
  /** Who scripts run as; default from `settings.user` and the server's uid. */
  identity?: RunIdentity;
  /** Where files go when scripts run as another user; default `dir` when that user can reach it, else a temp dir. */
  sharedDir?: string;
}

export interface RunnerDeps {
  catalog: CatalogReader;
  read: FileReader;
  logger: Logger;
}

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
function sharedRoot(dir: string): string {
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

const folder = (dir: string) => (dir === '' ? '.' : dir);

/** Why these arguments cannot be passed as they are, or `undefined`. */
function badArgs(args: readonly string[]): string | undefined {
  if (args.length > MAX_ARGS) return `at most ${MAX_ARGS} arguments`;
  if (args.reduce((sum, arg) => sum + Buffer.byteLength(arg), 0) > MAX_ARGS_BYTES)
    return `at most ${MAX_ARGS_BYTES} bytes of arguments`;
  if (args.some((arg) => arg.includes('\0'))) return 'an argument holds a NUL character';
  return undefined;
}

/** skill_run's state: grants planned per commit, confirmation tokens, and the one run that may go on. */
export function createRunner(options: RunnerOptions, deps: RunnerDeps): Runner {
  const env = options.env ?? process.env;
  const deployment = {
    interpreters: interpretersOf(options.settings.interpreters, env),
    environ: options.environ,
    allowUnscrubbed: options.settings.allowUnscrubbed,
  };
  const tokens = tokenBook(
    options.settings.secret === undefined ? undefined : Buffer.from(options.settings.secret, 'utf8'),
    options.settings.tokenTtlMs,
    options.now,
  );
  const identity = options.identity ?? runIdentity(options.settings.user, process.getuid?.());
  const other = identity.state === 'other' ? identity.user : undefined;
  const root = other === undefined ? options.dir : (options.sharedDir ?? sharedRoot(options.dir));
  const files = materialiser(root, deps.read, other === undefined ? undefined : { gid: other.gid });
  if (identity.state === 'unavailable') deps.logger.warn({}, `${identity.detail}; no script runs`);
  const plans = new WeakMap<Namespace, NamespacePlan>();
  const planOf = (ns: Namespace): NamespacePlan => {
    let plan = plans.get(ns);
    if (plan === undefined) {
      plans.set(ns, (plan = planNamespace(ns.skills, options.grants.get(ns.source), deployment)));
      const at = { source: ns.source, commit: ns.commit };
      for (const p of plan.problems) deps.logger.warn({ ...at, path: p.path, reason: p.reason }, p.detail);
      for (const [dir, scripts] of plan.skills)
        for (const { declared, status } of scripts)
          if (status.state === 'unavailable' && status.reason === 'interpreter-unavailable')
            deps.logger.warn(
              { ...at, path: `${folder(dir)}/${declared.script}`, reason: status.reason },
              `granted, but cannot run here: ${status.detail}`,
            );
    }
    return plan;
  };
  // What grants nothing is logged when a commit starts being served, not when someone first asks.
  if (options.grants.size > 0) {
    const planListed = () => {
      for (const ns of deps.catalog.listed()) planOf(ns);
    };
    planListed();
    deps.catalog.onChange(planListed);
  }
  // The one run going on, if any: set and cleared in one assignment each.
  let running: Promise<unknown> | undefined;

  // A run cancelled before its script started: nothing starts, and its one log line says so.
  const cancelledBeforeStart = (willRun: WillRun, token: 'still good' | 'spent'): RunResult => {
    deps.logger.info(
      { ...whereOf(willRun), cancelled: true },
      'skill_run: cancelled before the script started',
    );
    return {
      ok: false,
      refusal: {
        code: 'CANCELLED',
        detail: `the request was cancelled before the script started; nothing ran (the token is ${token})`,
      },
    };
  };

  const start = async (prepared: Prepared, calledAt: number, signal?: AbortSignal): Promise<RunResult> => {
    const { served, willRun } = prepared;
    const where = whereOf(willRun);
    if (identity.state === 'unavailable')
      return { ok: false, refusal: { code: 'RUN_USER_UNAVAILABLE', detail: identity.detail } };
    let tmp: string | undefined;
    try {
      await files.prune((source, commit) => deps.catalog.namespace(source, commit) !== undefined);
      const materialised = await files.ensure(served);
      if (materialised === 'replaced')
        deps.logger.warn(where, 'the materialised skill had changed on disk; it was written again from git');
      if (signal?.aborted === true) return cancelledBeforeStart(willRun, 'spent');
      let startMs = 0;
      const { env: scriptEnv } = scriptEnvironment(prepared.granted, env);
      // Another user gets a temp folder of its own, removed after the run.
      if (other !== undefined) scriptEnv.TMPDIR = tmp = await ownTempDir(root, other);
      deps.logger.info(
        { ...where, digest: willRun.digest, args: willRun.argv.length - 1 },
        'skill_run: starting',
      );
      const result = await runProcess(
        {
          command: willRun.interpreterPath,
          args: [path.join(willRun.cwd, ...willRun.script.split('/')), ...willRun.argv.slice(1)],
          cwd: willRun.cwd,
          env: scriptEnv,
          timeoutMs: willRun.timeoutMs,
          ...(signal === undefined ? {} : { signal }),
          user: other,
        },
        options.bounds,
        () => (startMs = performance.now() - calledAt),
      );
      deps.logger.info(
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
      return { ok: true, outcome: { ...result, materialised, startMs } };
    } catch (error) {
      deps.logger.error({ ...where, err: messageOf(error) }, 'skill_run failed');
      if (error instanceof SpawnError && error.code === 'EPERM' && other !== undefined) {
        const detail = `the script could not be started as user ${other.name} (uid ${other.uid}): EPERM`;
        return { ok: false, refusal: { code: 'RUN_USER_UNAVAILABLE', detail } };
      }
      const detail =
        error instanceof SpawnError
          ? `the ${willRun.interpreter} process could not be started (${error.code})`
          : 'the skill could not be materialised from the commit (see the server log)';
      return { ok: false, refusal: { code: 'RUN_FAILED', detail } };
    } finally {
      if (tmp !== undefined) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  };

  return {
    enabled: [...options.grants.values()].some((grants) => grants === 'all-declared' || grants.length > 0),
    settings: options.settings,
    scriptsOf: (served) => planOf(served.ns).skills.get(served.skill.dir),
    problemsOf: (ns) => planOf(ns).problems,
    prepare(served, script, args) {
      const refuse = (refusal: Refusal): Prepare => ({ ok: false, refusal });
      const { ns, skill } = served;
      const scripts = planOf(ns).skills.get(skill.dir) ?? [];
      const planned = scripts.find((p) => p.declared.script === script);
      if (planned === undefined)
        return refuse({
          code: 'NOT_DECLARED',
          detail: `${folder(skill.dir)} declares no script ${JSON.stringify(script)}; only declared scripts run (it declares ${scripts.length === 0 ? 'none' : scripts.map((p) => p.declared.script).join(', ')})`,
        });
      const { status, declared } = planned;
      if (status.state === 'not-granted')
        return refuse({
          code: 'NOT_GRANTED',
          reason: 'grant',
          detail: `the config of source "${ns.source}" grants no run: line for ${script} of ${folder(skill.dir)}; nothing of it runs`,
        });
      if (status.state === 'unavailable')
        return refuse({ code: 'UNAVAILABLE', reason: status.reason, detail: status.detail });
      const bad = badArgs(args);
      if (bad !== undefined) return refuse({ code: 'INVALID_ARGS', detail: bad });
      const file = served.files.get(script)!.file;
      const environment = scriptEnvironment(status.env, env);
      if (other !== undefined && !environment.names.includes('TMPDIR'))
        environment.names = [...environment.names, 'TMPDIR'].sort(compareText);
      const egress = skill.declaration?.egress ?? [];
      const willRun: WillRun = {
        source: ns.source,
        commit: ns.commit,
        skill: folder(skill.dir),
        uri: served.uri,
        script,
        digest: file.digest,
        interpreter: declared.interpreter,
        interpreterPath: status.interpreterPath,
        argv: [script, ...args],
        cwd: files.dirOf(served),
        timeoutMs: Math.min(
          declared.timeout === undefined ? DEFAULT_TIMEOUT_MS : Math.round(declared.timeout * 1000),
          MAX_TIMEOUT_MS,
        ),
        envNames: environment.names,
        ...(environment.notSet.length === 0 ? {} : { envNotSet: environment.notSet }),
        ...(egress.length === 0 ? {} : { egress }),
      };
      return { ok: true, prepared: { served, willRun, granted: status.env } };
    },
    issue: (prepared) => tokens.issue(prepared.willRun),
    async run(prepared, token, signal) {
      const calledAt = performance.now();
      if (signal?.aborted === true) return cancelledBeforeStart(prepared.willRun, 'still good');
      // Checked and taken without a pause: two calls cannot both pass.
      const refused = tokens.check(token, prepared.willRun);
      if (refused !== undefined) return { ok: false, refusal: refused };
      if (running !== undefined)
        return {
          ok: false,
          refusal: {
            code: 'RUN_BUSY',
            detail:
              'another script is running (one at a time); the token is still good: call again when it ends',
          },
        };
      tokens.spend(token);
      const run = start(prepared, calledAt, signal);
      running = run;
      try {
        return await run;
      } finally {
        running = undefined;
      }
    },
  };
}
