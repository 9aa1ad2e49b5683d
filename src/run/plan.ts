import type { RunGrants } from '../config/index.ts';
import type { IndexedSkill } from '../index/index.ts';
import { problem, type SkillProblem } from '../shared/reasons.ts';
import { join, type DeclaredScript } from '../skills/index.ts';
import type { EnvironStatus } from './environ.ts';
import type { Interpreters } from './interpreters.ts';

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
