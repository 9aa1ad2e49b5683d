import path from 'node:path';
import type { Config, RunGrants } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import { clearInitialEnviron, type EnvironStatus } from './initialEnviron.ts';
import type { RunnerOptions } from './runner.ts';

/**
 * skill_run as `serve` starts it: nothing when no source grants a script; otherwise the initial environment
 * block is cleared first (before any script can exist to read it) and its state decides whether scripts run.
 */
export function runOptionsFor(
  config: Config,
  logger: Logger,
  clear: () => EnvironStatus = clearInitialEnviron,
): RunnerOptions | undefined {
  const grants = new Map<string, RunGrants>();
  for (const source of config.sources) if (source.run !== undefined) grants.set(source.id, source.run);
  if (grants.size === 0) return undefined;
  const environ = clear();
  if (environ.state === 'unscrubbed')
    logger.warn(
      { reason: 'environ-unscrubbed', allowUnscrubbed: config.runs.allowUnscrubbed },
      config.runs.allowUnscrubbed
        ? `${environ.detail}; scripts run anyway (runs.allowUnscrubbed) and can read the server's initial environment`
        : `${environ.detail}; no script runs (runs.allowUnscrubbed: true runs them anyway)`,
    );
  return { grants, settings: config.runs, dir: path.join(config.dataDir, 'run'), environ };
}
