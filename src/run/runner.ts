import type { CatalogReader, CatalogSkill, FileReader, Namespace } from '../catalog/index.ts';
import type { RunGrants, RunSettings } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SkillProblem } from '../shared/reasons.ts';
import type { EnvironStatus } from './initialEnviron.ts';
import { createExecutor, type ScriptRunResult, sharedRoot } from './execute.ts';
import { type RunIdentity, runIdentity } from './identity.ts';
import { interpretersOf } from './interpreters.ts';
import { materialiser } from './materialise.ts';
import { createPlanner, type PlannedScript, type Prepare, type Prepared } from './plan.ts';
import type { ProcessBounds } from './process.ts';
import { tokenBook } from './tokens.ts';

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
  /** A confirmation token bound to the preview and to `caller` (caller.ts's principal). */
  issue(prepared: Prepared, caller: string): { token: string; expiresAt: number };
  /**
   * Runs the prepared script once, if `token` confirms exactly this preview for `caller` and no other run is
   * going on.
   * Aborting `signal` ends the script as its timeout does; aborted before the script starts, nothing starts.
   */
  run(prepared: Prepared, token: string, caller: string, signal?: AbortSignal): Promise<ScriptRunResult>;
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

/**
 * skill_run's state, in three steps: plan (grants per commit, the preview of a call), confirm (a token bound to
 * the preview, spent once) and execute (one run at a time, from files materialised out of the commit).
 */
export function createRunner(options: RunnerOptions, deps: RunnerDeps): Runner {
  const env = options.env ?? process.env;
  const identity = options.identity ?? runIdentity(options.settings.user, process.getuid?.());
  const other = identity.state === 'other' ? identity.user : undefined;
  const root = other === undefined ? options.dir : (options.sharedDir ?? sharedRoot(options.dir));
  const files = materialiser(root, deps.read, other === undefined ? undefined : { gid: other.gid });
  if (identity.state === 'unavailable') deps.logger.warn({}, `${identity.detail}; no script runs`);
  const planner = createPlanner({
    grants: options.grants,
    deployment: {
      interpreters: interpretersOf(options.settings.interpreters, env),
      environ: options.environ,
      allowUnscrubbed: options.settings.allowUnscrubbed,
    },
    env,
    otherUser: other !== undefined,
    dirOf: files.dirOf,
    catalog: deps.catalog,
    logger: deps.logger,
  });
  const tokens = tokenBook(
    options.settings.secret === undefined ? undefined : Buffer.from(options.settings.secret, 'utf8'),
    options.settings.tokenTtlMs,
    options.now,
  );
  const executor = createExecutor({
    identity,
    other,
    root,
    files,
    env,
    bounds: options.bounds,
    catalog: deps.catalog,
    logger: deps.logger,
  });
  return {
    enabled: [...options.grants.values()].some((grants) => grants === 'all-declared' || grants.length > 0),
    settings: options.settings,
    ...planner,
    issue: (prepared, caller) => tokens.issue(prepared.willRun, caller),
    async run(prepared, token, caller, signal) {
      const calledAt = performance.now();
      if (signal?.aborted === true) return executor.cancelledBeforeStart(prepared.willRun, 'still good');
      // Checked and taken without a pause: two calls cannot both pass.
      const refused = tokens.check(token, prepared.willRun, caller);
      if (refused !== undefined) return { ok: false, refusal: refused };
      if (executor.busy)
        return {
          ok: false,
          refusal: {
            code: 'run-busy',
            detail:
              'another script is running (one at a time); the token is still good: call again when it ends',
          },
        };
      tokens.spend(token);
      return executor.execute(prepared, calledAt, signal);
    },
  };
}
