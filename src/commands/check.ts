import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { skillMdUri, type Namespace } from '../catalog/index.ts';
import { SOURCE_ID_PATTERN } from '../shared/patterns.ts';
import { ConfigError, type SourceConfig } from '../config/index.ts';
import { DEFAULT_HTTP_TIMEOUT_MS, GitError, keyringOf } from '../git/index.ts';
import type { Signer } from '../shared/signer.ts';
import { openSource } from '../sync/source.ts';
import { COMMIT_ID, fullCommit, locationOf, UsageError, type VerifyOptions, verifyOf } from './sourceArgs.ts';

export { UsageError } from './sourceArgs.ts';

export interface CheckOptions extends VerifyOptions {
  target: string;
  commit?: string;
  ref?: string;
  paths?: string[];
  json?: boolean;
  strict?: boolean;
  strictNames?: boolean;
  id?: string;
  /** Environment variable holding a token for a private remote. */
  tokenEnv?: string;
}

/** `skillpin check --json` output. Version 1: fields are only ever added. */
export interface CheckReport {
  version: 1;
  repository: string;
  commit: string;
  commitTime: string;
  skills: Array<{
    name: string;
    uri: string;
    path: string;
    servedPath: string;
    files: number;
    bytes: number;
  }>;
  problems: Array<{
    source: string;
    commit: string;
    path: string;
    reason: string;
    severity: 'error' | 'warning';
    detail: string;
  }>;
  errors: number;
  warnings: number;
  /** No errors (and, under --strict, no warnings). */
  ok: boolean;
  /** Who signed the commit (or its tag), when keys were given to verify it; `null` otherwise. */
  signer: Signer | null;
}

export const CHECK_EXIT = { ok: 0, problems: 1, usage: 2 } as const;

/** A source id from a repository's name: `My_Skills.git` → `my-skills`. */
function idFrom(target: string): string {
  const name = path
    .basename(target.replace(/\/+$/, ''))
    .replace(/\.git$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return SOURCE_ID_PATTERN.test(name) ? name : 'repo';
}

function sourceFor(options: CheckOptions): SourceConfig {
  if (options.commit !== undefined && options.ref !== undefined)
    throw new UsageError('give --commit or --ref, not both');
  if (options.commit !== undefined && !COMMIT_ID.test(options.commit))
    throw new UsageError('--commit must be a commit id: 4 to 40 hex digits');
  const id = options.id ?? idFrom(options.target === '.' ? process.cwd() : options.target);
  if (!SOURCE_ID_PATTERN.test(id))
    throw new UsageError('--id must be lowercase letters, digits, "-" and "."');
  const verify = verifyOf(options);
  return {
    id,
    location: locationOf(options.target, options.tokenEnv),
    target:
      options.commit !== undefined
        ? { kind: 'commit', commit: options.commit }
        : { kind: 'ref', ref: options.ref ?? 'HEAD' },
    paths: (options.paths ?? [])
      .map((p) => p.replace(/^\.\/|\/+$/g, ''))
      .filter((p) => p !== '' && p !== '.'),
    strictNames: options.strictNames ?? false,
    keep: 0,
    timeoutMs: DEFAULT_HTTP_TIMEOUT_MS,
    ...(verify === undefined ? {} : { verify }),
  };
}

export function reportOf(ns: Namespace, strict: boolean): CheckReport {
  const problems = ns.problems.map((p) => ({ source: ns.source, commit: ns.commit, ...p }));
  const errors = problems.filter((p) => p.severity === 'error').length;
  const warnings = problems.length - errors;
  return {
    version: 1,
    repository: ns.origin.repository,
    commit: ns.commit,
    commitTime: ns.commitTime,
    skills: ns.skills.map((skill) => ({
      name: skill.name,
      uri: skillMdUri(ns.source, ns.commit, skill.servedDir),
      path: skill.dir === '' ? '.' : skill.dir,
      servedPath: skill.servedDir,
      files: skill.files.length,
      bytes: skill.bytes,
    })),
    problems,
    errors,
    warnings,
    ok: errors === 0 && (!strict || warnings === 0),
    signer: ns.signer ?? null,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function renderReport(report: CheckReport): string {
  const lines = [
    `${report.repository} @ ${report.commit} (${report.commitTime})`,
    `${plural(report.skills.length, 'skill')} served, ${plural(report.errors, 'error')}, ${plural(report.warnings, 'warning')}`,
    ...(report.signer === null
      ? []
      : [
          `signed by ${report.signer.identity} (${report.signer.type} ${report.signer.object}, key ${report.signer.key})`,
        ]),
    '',
  ];
  const width = Math.max(4, ...report.skills.map((s) => s.name.length));
  for (const skill of report.skills)
    lines.push(
      `  ${skill.name.padEnd(width)}  ${plural(skill.files, 'file').padStart(10)}  ${plural(skill.bytes, 'byte').padStart(14)}  ${skill.uri}`,
    );
  if (report.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const p of report.problems)
      lines.push(`  ${p.severity.padEnd(7)}  ${p.reason.padEnd(22)}  ${p.path}`, `           ${p.detail}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `skillpin check`: index one commit exactly as the server would and report every skill and problem. */
export async function check(
  options: CheckOptions,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<number> {
  const { out, err } = io;
  let source: SourceConfig;
  try {
    source = sourceFor(options);
    if (source.verify !== undefined) await keyringOf(source.verify);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    if (options.json)
      out(`${JSON.stringify({ version: 1, error: { reason: 'usage', detail: error.message } })}\n`);
    else err(`skillpin check: ${error.message}\n`);
    return CHECK_EXIT.usage;
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'skillpin-check-'));
  try {
    // A short commit id is expanded in the local repository; the report names the full one.
    if (source.target.kind === 'commit') {
      const commit = await fullCommit(source.location, source.target.commit);
      source = { ...source, target: { kind: 'commit', commit } };
    }
    const opened = openSource(source, { dataDir });
    const ns = await opened.load(await opened.resolve());
    const report = reportOf(ns, options.strict ?? false);
    out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
    return report.ok ? CHECK_EXIT.ok : CHECK_EXIT.problems;
  } catch (error) {
    if (!(error instanceof GitError || error instanceof UsageError)) throw error;
    const reason = error instanceof GitError ? error.code : 'usage';
    if (options.json) out(`${JSON.stringify({ version: 1, error: { reason, detail: error.message } })}\n`);
    else err(`skillpin check: ${error instanceof GitError ? `${reason}: ` : ''}${error.message}\n`);
    return CHECK_EXIT.usage;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
