import path from 'node:path';
import { ConfigError } from '../config/error.ts';
import { commandLineSource } from '../config/commandLine.ts';
import type { Config, SourceConfig } from '../config/types.ts';
import {
  expandCommit,
  GitError,
  keyringOf,
  openLocalRepository,
  type Repository,
  resolveLocalRef,
  revParseLocal,
} from '../git/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { COMMIT_PATTERN } from '../shared/patterns.ts';
import { refMatcher } from '../shared/refNames.ts';
import { sourceOrigin } from '../catalog/index.ts';
import { changeCount, renderMarkdown, renderText, sourceDiff } from '../pins/diffReport.ts';
import { loadAt } from '../pins/pinning.ts';
import { withScratch } from '../pins/scratch.ts';
import { COMMIT_ID, locationOf, UsageError, type VerifyOptions, verifyOf } from './sourceArgs.ts';
import type { DiffFormat } from './update.ts';

export interface DiffOptions extends VerifyOptions {
  /** `<repository>`; with `config`, the id of a source of that config (its repository and settings). */
  repository: string;
  /** `-c <file>`, loaded: `<repository>` names one of its sources, and `<from>`/`<to>` refs of it by name. */
  config?: Config;
  from: string;
  to: string;
  paths?: string[];
  strictNames?: boolean;
  format: DiffFormat;
  tokenEnv?: string;
}

/**
 * One end of the diff as a source target: a full commit; in a local repository a branch, tag, `HEAD` or short
 * commit id, else any revision `git rev-parse` resolves (`HEAD~1`, `v1.2^{commit}`); on a remote a ref (a remote
 * cannot expand a short id).
 */
async function targetOf(location: SourceConfig['location'], end: string): Promise<SourceConfig['target']> {
  if (COMMIT_PATTERN.test(end)) return { kind: 'commit', commit: end };
  if (location.kind === 'remote') return { kind: 'ref', ref: end };
  const repo = await openLocalRepository(location.path);
  try {
    return { kind: 'commit', commit: await localCommitOf(repo, location.path, end) };
  } finally {
    await repo.close();
  }
}

/** A ref first, then a short commit id, then git's revision grammar (when git is installed). */
async function localCommitOf(repo: Repository, dir: string, end: string): Promise<string> {
  try {
    return await resolveLocalRef(repo, end);
  } catch (error) {
    if (!(error instanceof GitError) || error.code !== 'source-ref-not-found') throw error;
    if (COMMIT_ID.test(end)) return await expandCommit(repo, end);
    const parsed = await revParseLocal(dir, end);
    if (parsed === undefined) throw error;
    return parsed;
  }
}

/**
 * A configured source to diff two commits of, with its own settings (paths, strictNames, verify, credentials).
 * Of a `refs:` source, each end must be one of its refs (short or full name) or a commit.
 */
function configuredSource(config: Config, options: DiffOptions): Omit<SourceConfig, 'target'> {
  const source = config.sources.find((s) => s.id === options.repository);
  if (source === undefined)
    throw new UsageError(`no source ${JSON.stringify(options.repository)} in ${config.file}`);
  const { target } = source;
  if (target.kind === 'refs') {
    const matches = refMatcher(target.patterns);
    for (const end of [options.from, options.to])
      if (
        !COMMIT_PATTERN.test(end) &&
        !(end.startsWith('refs/')
          ? matches(end)
          : matches(`refs/heads/${end}`) || matches(`refs/tags/${end}`))
      )
        throw new UsageError(
          `${end} is no ref source ${source.id} follows (refs: ${target.patterns.join(', ')})`,
        );
  }
  const { target: _target, pollMs: _pollMs, ...settings } = source;
  return settings;
}

/** `skillpin diff <repository> <from> <to>`: skills added, removed and changed between two commits. */
export async function diff(
  options: DiffOptions,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  let source: Omit<SourceConfig, 'target'>;
  try {
    const verify = verifyOf(options);
    if (verify !== undefined) await keyringOf(verify);
    source =
      options.config !== undefined
        ? configuredSource(options.config, options)
        : commandLineSource({
            id: 'diff',
            location: locationOf(options.repository, options.tokenEnv),
            paths: options.paths,
            strictNames: options.strictNames,
            verify,
          });
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    io.err(`skillpin diff: ${error.message}\n`);
    return EXIT.usage;
  }
  const loaded = await withScratch(async (dataDir) => {
    const ends = [];
    for (const end of [options.from, options.to]) {
      let target: SourceConfig['target'];
      try {
        target = await targetOf(source.location, end);
      } catch (error) {
        if (!(error instanceof GitError)) throw error;
        return { failure: { reason: error.code, detail: error.message } };
      }
      const result = await loadAt({ ...source, target }, 'resolve', dataDir);
      if (!result.ok) return { failure: result.failure };
      ends.push(result.index);
    }
    return { ends };
  });
  if (loaded.failure !== undefined) {
    const { reason, detail } = loaded.failure;
    if (options.format === 'json') io.out(`${JSON.stringify({ version: 1, error: { reason, detail } })}\n`);
    else io.err(`skillpin diff: ${reason}: ${detail}\n`);
    return EXIT.failed;
  }
  const [from, to] = loaded.ends!;
  const { repository } = sourceOrigin({ ...source, target: { kind: 'commit', commit: from!.commit } });
  const name = options.config === undefined ? path.basename(options.repository) : options.repository;
  const result = sourceDiff(name, repository, { index: from! }, { index: to! });
  if (options.format === 'json') io.out(`${JSON.stringify({ version: 1, ...result }, null, 2)}\n`);
  else io.out(options.format === 'markdown' ? renderMarkdown([result]) : renderText([result]));
  // As diff(1): 1 when the ends differ (a skill added, removed or changed, a problem introduced or resolved).
  const { introduced, resolved } = result.problems;
  return changeCount(result) + introduced.length + resolved.length > 0 ? EXIT.findings : EXIT.ok;
}
