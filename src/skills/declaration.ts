import { problem, type SkillProblem } from '../shared/reasons.ts';
import type { Frontmatter } from './frontmatter.ts';
import { SKILL_MD, unusableName } from './discover.ts';
import { join } from './paths.ts';

/** The frontmatter key of the block where a skill declares what a host may run of it (its scripts). */
export const DECLARATION_KEY = 'mcp-host';
/** The one major version of the block this server reads; another major is refused whole. */
export const DECLARATION_VERSION = 1;
/** Interpreters a declaration may name and some deployment runs; which of them run here is configuration. */
export const KNOWN_INTERPRETERS = ['node', 'python3'] as const;
export type Interpreter = (typeof KNOWN_INTERPRETERS)[number];

/** An environment variable name as POSIX shells write them. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const INTERPRETER_NAME = /^[a-z][a-z0-9._-]{0,31}$/;

/** One entry point a skill declares: what it asks for, never what it is given. */
export interface DeclaredScript {
  /** Below the skill folder, as the manifest names it. */
  script: string;
  /** As declared: one of KNOWN_INTERPRETERS, or a name no deployment runs. */
  interpreter: string;
  /** Variables the script asks for, in declaration order. */
  env: string[];
  /** Seconds, when declared (the runner clamps it). */
  timeout?: number;
}

/** A skill's accepted `mcp-host:` block. Plain data: persisted in the index. */
export interface Declaration {
  scripts: DeclaredScript[];
  /** Hosts the skill says it reaches: shown, never enforced. */
  egress: string[];
}

const KNOWN_KEYS = new Set(['version', 'run', 'env', 'egress']);
const KNOWN_RUN_KEYS = new Set(['script', 'interpreter', 'env', 'timeout']);
const KNOWN_ENV_KEYS = new Set(['name', 'secret', 'description']);

const isMapping = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why `path` cannot name a file below the skill folder, checked as a string (seed: before any resolving). */
export function badScriptPath(path: string): string | undefined {
  if (path === '' || path.startsWith('/')) return 'must be a path relative to the skill folder';
  if (path.includes('%')) return 'must not hold percent-escapes';
  if (path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return 'must not hold ".", ".." or empty segments';
  const unusable = unusableName(path);
  return unusable === undefined ? undefined : `holds ${unusable}`;
}

/** The version as "major[.minor]", or `undefined` when it is not one. */
function majorOf(version: unknown): number | undefined {
  const text = typeof version === 'number' || typeof version === 'string' ? String(version) : '';
  const match = /^(\d+)(?:\.\d+)*$/.exec(text);
  return match === null ? undefined : Number(match[1]);
}

interface Reading {
  errors: string[];
  ignored: string[];
}

function readScript(item: unknown, at: string, reading: Reading): DeclaredScript | undefined {
  if (!isMapping(item)) {
    reading.errors.push(`${at} must be a mapping with script and interpreter`);
    return undefined;
  }
  for (const key of Object.keys(item)) if (!KNOWN_RUN_KEYS.has(key)) reading.ignored.push(`${at}.${key}`);
  const { script, interpreter, env, timeout } = item;
  const before = reading.errors.length;
  if (typeof script !== 'string') reading.errors.push(`${at}.script must be a path`);
  else {
    const bad = badScriptPath(script);
    if (bad !== undefined) reading.errors.push(`${at}.script ${JSON.stringify(script)} ${bad}`);
  }
  if (typeof interpreter !== 'string' || !INTERPRETER_NAME.test(interpreter))
    reading.errors.push(`${at}.interpreter must name an interpreter (${KNOWN_INTERPRETERS.join(', ')})`);
  const names = env ?? [];
  if (
    !Array.isArray(names) ||
    !names.every((name) => typeof name === 'string' && ENV_NAME_PATTERN.test(name)) ||
    new Set(names).size !== names.length
  )
    reading.errors.push(`${at}.env must be a list of distinct variable names`);
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0))
    reading.errors.push(`${at}.timeout must be a positive number of seconds`);
  if (reading.errors.length > before) return undefined;
  return {
    script: script as string,
    interpreter: interpreter as string,
    env: [...(names as string[])],
    timeout: timeout as number | undefined,
  };
}

function readEnvProposals(value: unknown, reading: Reading): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    reading.errors.push(`${DECLARATION_KEY}.env must be a list of {name, secret}`);
    return;
  }
  for (const [index, item] of value.entries()) {
    const at = `${DECLARATION_KEY}.env[${index}]`;
    if (!isMapping(item) || typeof item['name'] !== 'string' || !ENV_NAME_PATTERN.test(item['name'])) {
      reading.errors.push(`${at} must be a mapping whose name is a variable name`);
      continue;
    }
    if (item['secret'] !== undefined && typeof item['secret'] !== 'boolean')
      reading.errors.push(`${at}.secret must be true or false`);
    for (const key of Object.keys(item)) if (!KNOWN_ENV_KEYS.has(key)) reading.ignored.push(`${at}.${key}`);
  }
}

/**
 * Reads a skill's `mcp-host:` block strictly: another major version, a wrong shape or a bad value refuses the
 * whole block (the skill keeps its instructions, loses its scripts); unknown keys are ignored and named; a
 * declared script that is not a file of the skill is dropped. The YAML itself was parsed with the
 * frontmatter (YAML 1.2 core, no anchors or aliases, at most 64 KiB).
 */
export function readDeclaration(
  frontmatter: Frontmatter,
  dir: string,
  files: ReadonlySet<string>,
): { declaration?: Declaration; problems: SkillProblem[] } {
  const block = frontmatter[DECLARATION_KEY];
  if (block === undefined) return { problems: [] };
  const where = join(dir, SKILL_MD);
  const refuse = (detail: string) => ({
    problems: [problem(where, 'declaration', `${detail}; the skill's scripts are not declared`)],
  });
  if (!isMapping(block)) return refuse(`${DECLARATION_KEY} must be a mapping`);
  const major = majorOf(block['version']);
  if (block['version'] === undefined) return refuse(`${DECLARATION_KEY}.version is missing`);
  if (major !== DECLARATION_VERSION)
    return refuse(
      `${DECLARATION_KEY}.version ${JSON.stringify(block['version'])} is not a version this server reads (${DECLARATION_VERSION})`,
    );
  const reading: Reading = { errors: [], ignored: [] };
  for (const key of Object.keys(block))
    if (!KNOWN_KEYS.has(key)) reading.ignored.push(`${DECLARATION_KEY}.${key}`);
  const run = block['run'] ?? [];
  const scripts: DeclaredScript[] = [];
  if (!Array.isArray(run)) reading.errors.push(`${DECLARATION_KEY}.run must be a list`);
  else
    for (const [index, item] of run.entries()) {
      const script = readScript(item, `${DECLARATION_KEY}.run[${index}]`, reading);
      if (script === undefined) continue;
      if (scripts.some((other) => other.script === script.script))
        reading.errors.push(`${DECLARATION_KEY}.run[${index}].script ${script.script} is declared twice`);
      else scripts.push(script);
    }
  readEnvProposals(block['env'], reading);
  const egress = block['egress'] ?? [];
  if (!Array.isArray(egress) || !egress.every((host) => typeof host === 'string' && host !== ''))
    reading.errors.push(`${DECLARATION_KEY}.egress must be a list of host names`);
  if (reading.errors.length > 0) return refuse(reading.errors.join('; '));
  const problems: SkillProblem[] = [];
  if (reading.ignored.length > 0)
    problems.push(
      problem(
        where,
        'declaration',
        `keys this server does not read were ignored: ${reading.ignored.join(', ')}`,
      ),
    );
  const present = scripts.filter((declared) => {
    if (files.has(declared.script)) return true;
    problems.push(
      problem(
        join(dir, declared.script),
        'declared-script-missing',
        `${DECLARATION_KEY} declares ${declared.script}, which is not a file of the skill; it cannot run`,
      ),
    );
    return false;
  });
  return { declaration: { scripts: present, egress: egress as string[] }, problems };
}
