import type { CatalogReader, CatalogSkill, Namespace } from '../catalog/index.ts';
import type { RunGrants } from '../config/index.ts';
import type { IndexedSkill } from '../index/index.ts';
import type { Logger } from '../shared/log.ts';
import { type ProblemReason, problem, type ReasonOf, type SkillProblem } from '../shared/reasons.ts';
import { compareText } from '../shared/text.ts';
import { join, type DeclaredScript } from '../skills/index.ts';
import type { EnvironStatus } from './initialEnviron.ts';
import { scriptEnvironment } from './environment.ts';
import type { Interpreters } from './interpreters.ts';
import { DEFAULT_TIMEOUT_MS, MAX_ARGS, MAX_ARGS_BYTES, MAX_TIMEOUT_MS } from './limits.ts';
import type { WillRun } from './preview.ts';

/** What became of one declared script here: it runs, the owner did not grant it, or it cannot run here. */
export type ScriptState =
  | { state: 'runnable'; interpreterPath: string; env: string[] }
  | { state: 'not-granted' }
  | { state: 'unavailable'; reason: 'interpreter-unavailable' | 'environ-unscrubbed'; detail: string };

export interface PlannedScript {
  declared: DeclaredScript;
  status: ScriptState;
}

/** Where grants and declarations meet for one commit of one source. */
export interface NamespacePlan {
  /** Skill folder ('' for the root) → its declared scripts, in declaration order. */
  skills: ReadonlyMap<string, readonly PlannedScript[]>;
  /** Grant lines that grant nothing, and a deployment that runs nothing. */
  problems: readonly SkillProblem[];
}

/** What this deployment can start, decided at start. */
export interface Deployment {
  interpreters: Interpreters;
  environ: EnvironStatus;
  allowUnscrubbed: boolean;
}

const folder = (dir: string) => (dir === '' ? '.' : dir);
const listed = (names: readonly string[]) => (names.length === 0 ? 'nothing' : names.join(', '));

/** Granted variables by skill folder and script, from grant lines that hold; the others become problems. */
function grantedBy(
  skills: ReadonlyMap<string, IndexedSkill>,
  grants: RunGrants | undefined,
  problems: SkillProblem[],
): (dir: string, script: DeclaredScript) => string[] | undefined {
  if (grants === undefined) return () => undefined;
  // The owner's explicit choice for a trusted source: whatever a skill declares, as it declares it.
  if (grants === 'all-declared') return (_dir, script) => script.env;
  const granted = new Map<string, Set<string>>();
  for (const line of grants) {
    const skill = skills.get(line.skill);
    const where = join(line.skill, line.script);
    if (skill === undefined) {
      problems.push(
        problem(
          folder(line.skill),
          'grant',
          `run: names the skill folder ${folder(line.skill)}, where this commit serves no skill; the line grants nothing`,
        ),
      );
      continue;
    }
    const scripts = skill.declaration?.scripts ?? [];
    const declared = scripts.find((script) => script.script === line.script);
    if (declared === undefined) {
      problems.push(
        problem(
          where,
          'grant',
          `run: names ${line.script}, which ${folder(line.skill)} does not declare (it declares ${listed(scripts.map((s) => s.script))}); the line grants nothing`,
        ),
      );
      continue;
    }
    const undeclared = line.env.filter((name) => !declared.env.includes(name));
    if (undeclared.length > 0) {
      problems.push(
        problem(
          where,
          'grant',
          `run: grants ${undeclared.join(', ')} to ${line.script}, which declares ${listed(declared.env)}; the line grants nothing`,
        ),
      );
      continue;
    }
    const key = `${line.skill}\0${line.script}`;
    granted.set(key, new Set([...(granted.get(key) ?? []), ...line.env]));
  }
  return (dir, script) => {
    const names = granted.get(`${dir}\0${script.script}`);
    return names === undefined ? undefined : script.env.filter((name) => names.has(name));
  };
}

/**
 * The intersection of the owner's grants and each skill's declaration, for one commit: a script runs only
 * when both name it, with the variables both name. A grant names a skill by its folder in the repository,
 * never by its frontmatter name, so a skill that renames itself cannot take a neighbour's grants.
 */
export function planNamespace(
  skills: readonly IndexedSkill[],
  grants: RunGrants | undefined,
  deployment: Deployment,
): NamespacePlan {
  const problems: SkillProblem[] = [];
  const byDir = new Map(skills.map((skill) => [skill.dir, skill]));
  const granted = grantedBy(byDir, grants, problems);
  const blocked = deployment.environ.state === 'unscrubbed' && !deployment.allowUnscrubbed;
  let anyGranted = false;
  const planned = new Map<string, PlannedScript[]>();
  for (const skill of skills) {
    const scripts = skill.declaration?.scripts ?? [];
    if (scripts.length === 0) continue;
    planned.set(
      skill.dir,
      scripts.map((declared): PlannedScript => {
        const env = granted(skill.dir, declared);
        if (env === undefined) return { declared, status: { state: 'not-granted' } };
        anyGranted = true;
        const interpreter = deployment.interpreters(declared.interpreter);
        if (!interpreter.ok)
          return {
            declared,
            status: { state: 'unavailable', reason: 'interpreter-unavailable', detail: interpreter.detail },
          };
        if (blocked && deployment.environ.state === 'unscrubbed')
          return {
            declared,
            status: { state: 'unavailable', reason: 'environ-unscrubbed', detail: deployment.environ.detail },
          };
        return { declared, status: { state: 'runnable', interpreterPath: interpreter.path, env } };
      }),
    );
  }
  if (anyGranted && deployment.environ.state === 'unscrubbed')
    problems.push(
      problem(
        '.',
        'environ-unscrubbed',
        blocked
          ? `${deployment.environ.detail}; no script of this source runs (runs.allowUnscrubbed: true runs them anyway)`
          : `${deployment.environ.detail}; scripts run anyway (runs.allowUnscrubbed: true) and can read it`,
      ),
    );
  return { skills: planned, problems };
}

/** Why skill_run did not run a script: a stable code, the reason code when one applies, and a sentence. */
export interface RunRefusal {
  code: ReasonOf<'run'>;
  /** The problem behind the refusal, when a commit's problems name it (`grant`, `interpreter-unavailable`, …). */
  reason?: ProblemReason;
  detail: string;
}

/** A run that may be confirmed: what the preview shows, and what starts when it is. */
export interface Prepared {
  served: CatalogSkill;
  willRun: WillRun;
  /** The variables granted and declared: what the script's environment is built from. */
  granted: readonly string[];
}

export type Prepare = { ok: true; prepared: Prepared } | { ok: false; refusal: RunRefusal };

/** Why these arguments cannot be passed as they are, or `undefined`. */
function badArgs(args: readonly string[]): string | undefined {
  if (args.length > MAX_ARGS) return `at most ${MAX_ARGS} arguments`;
  if (args.reduce((sum, arg) => sum + Buffer.byteLength(arg), 0) > MAX_ARGS_BYTES)
    return `at most ${MAX_ARGS_BYTES} bytes of arguments`;
  if (args.some((arg) => arg.includes('\0'))) return 'an argument holds a NUL character';
  return undefined;
}

/** What the planner needs: the grants and deployment, and how a skill's folder is named where it runs. */
export interface PlannerOptions {
  grants: ReadonlyMap<string, RunGrants>;
  deployment: Deployment;
  /** The environment allowlisted variables come from. */
  env: NodeJS.ProcessEnv;
  /** Scripts run as another user: each gets a TMPDIR of its own, which the preview names. */
  otherUser: boolean;
  /** The folder a served skill is materialised in. */
  dirOf(served: CatalogSkill): string;
  catalog: CatalogReader;
  logger: Logger;
}

export interface Planner {
  scriptsOf(served: CatalogSkill): readonly PlannedScript[] | undefined;
  problemsOf(ns: Namespace): readonly SkillProblem[];
  prepare(served: CatalogSkill, script: string, args: readonly string[]): Prepare;
}

/**
 * skill_run's first step: grants planned once per commit (what grants nothing is logged when the commit starts
 * being served, not when someone first asks), and the preview of one call, or why it cannot run. Starts nothing.
 */
export function createPlanner(options: PlannerOptions): Planner {
  const { grants, deployment, env, logger } = options;
  const plans = new WeakMap<Namespace, NamespacePlan>();
  const planOf = (ns: Namespace): NamespacePlan => {
    let plan = plans.get(ns);
    if (plan === undefined) {
      plans.set(ns, (plan = planNamespace(ns.skills, grants.get(ns.source), deployment)));
      const at = { source: ns.source, commit: ns.commit };
      for (const p of plan.problems) logger.warn({ ...at, path: p.path, reason: p.reason }, p.detail);
      for (const [dir, scripts] of plan.skills)
        for (const { declared, status } of scripts)
          if (status.state === 'unavailable' && status.reason === 'interpreter-unavailable')
            logger.warn(
              { ...at, path: `${folder(dir)}/${declared.script}`, reason: status.reason },
              `granted, but cannot run here: ${status.detail}`,
            );
    }
    return plan;
  };
  // What grants nothing is logged when a commit starts being served, not when someone first asks.
  if (grants.size > 0) {
    const planListed = () => {
      for (const ns of options.catalog.listed()) planOf(ns);
    };
    planListed();
    options.catalog.onChange(planListed);
  }

  const prepare = (served: CatalogSkill, script: string, args: readonly string[]): Prepare => {
    const refuse = (refusal: RunRefusal): Prepare => ({ ok: false, refusal });
    const { ns, skill } = served;
    const scripts = planOf(ns).skills.get(skill.dir) ?? [];
    const planned = scripts.find((p) => p.declared.script === script);
    if (planned === undefined)
      return refuse({
        code: 'run-not-declared',
        detail: `${folder(skill.dir)} declares no script ${JSON.stringify(script)}; only declared scripts run (it declares ${scripts.length === 0 ? 'none' : scripts.map((p) => p.declared.script).join(', ')})`,
      });
    const { status, declared } = planned;
    if (status.state === 'not-granted')
      return refuse({
        code: 'run-not-granted',
        reason: 'grant',
        detail: `the config of source "${ns.source}" grants no run: line for ${script} of ${folder(skill.dir)}; nothing of it runs`,
      });
    if (status.state === 'unavailable')
      return refuse({ code: 'run-unavailable', reason: status.reason, detail: status.detail });
    const bad = badArgs(args);
    if (bad !== undefined) return refuse({ code: 'run-args-invalid', detail: bad });
    const file = served.files.get(script)!.file;
    const environment = scriptEnvironment(status.env, env);
    if (options.otherUser && !environment.names.includes('TMPDIR'))
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
      cwd: options.dirOf(served),
      timeoutMs: Math.min(
        declared.timeout === undefined ? DEFAULT_TIMEOUT_MS : Math.round(declared.timeout * 1000),
        MAX_TIMEOUT_MS,
      ),
      envNames: environment.names,
      // Absent when empty, not []: the preview is skill_run's result, and its JSON is what a token's hash covers.
      ...(environment.notSet.length === 0 ? {} : { envNotSet: environment.notSet }),
      ...(egress.length === 0 ? {} : { egress }),
    };
    return { ok: true, prepared: { served, willRun, granted: status.env } };
  };

  return {
    scriptsOf: (served) => planOf(served.ns).skills.get(served.skill.dir),
    problemsOf: (ns) => planOf(ns).problems,
    prepare,
  };
}
