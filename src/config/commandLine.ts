import { ConfigError } from './error.ts';
import { DEFAULT_HTTP_TIMEOUT_MS, normalizePaths, repositoryPathProblem } from './rules.ts';
import type { SourceConfig, VerifyConfig } from './types.ts';

/** What a command line names of a source that a command reads once, without a config (`check`, `diff`). */
export interface CommandLineSource {
  id: string;
  location: SourceConfig['location'];
  /** `--paths`, as typed. */
  paths?: readonly string[];
  strictNames?: boolean;
  verify?: VerifyConfig;
}

/**
 * The source a command line names, as a config would load it without its target: `--paths` checked as the config
 * checks `paths:`, every setting the command line has no option for at a config's default, and nothing kept.
 */
export function commandLineSource(given: CommandLineSource): Omit<SourceConfig, 'target'> {
  for (const entry of given.paths ?? []) {
    const problem = repositoryPathProblem(entry);
    if (problem !== undefined) throw new ConfigError(`--paths ${JSON.stringify(entry)}: ${problem}`);
  }
  return {
    id: given.id,
    location: given.location,
    paths: normalizePaths(given.paths ?? []),
    strictNames: given.strictNames ?? false,
    keep: 0,
    timeoutMs: DEFAULT_HTTP_TIMEOUT_MS,
    verify: given.verify,
  };
}
