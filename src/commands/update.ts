import type { Config } from '../config/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { writeFileAtomic } from '../shared/fs.ts';
import { renderLockfile } from '../pins/lockfile.ts';
import { renderMarkdown, renderText, type SourceDiff } from '../pins/diffReport.ts';
import { relock } from '../pins/relock.ts';
import { reportFailures, reportRefused } from './lock.ts';

/** `skillpin update --json`. Version 1: fields are only ever added. */
export interface UpdateReport {
  version: 1;
  lockfile: string;
  changed: boolean;
  /** The sources whose locked commit moved, or that joined or left the lockfile. */
  sources: SourceDiff[];
}

export type DiffFormat = 'text' | 'json' | 'markdown';

/**
 * `skillpin update [source…]`: re-resolves the named sources (default all), rewrites the lockfile when it
 * changed, and prints what changed, skill by skill. Nothing is written when a source fails. Exit `ok` when the
 * lockfile did not change, `findings` when it did (CI opens a pull request only then).
 */
export async function update(
  config: Config,
  names: readonly string[],
  format: DiffFormat,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  const unknown = names.filter((name) => !config.sources.some((source) => source.id === name));
  if (unknown.length > 0) {
    io.err(
      `skillpin update: no source ${unknown.map((name) => JSON.stringify(name)).join(', ')} in ${config.file}\n`,
    );
    return EXIT.usage;
  }
  const result = await relock(config, (source) => names.length === 0 || names.includes(source.id));
  if (result.failures.length > 0) {
    reportFailures(result.failures, io.err);
    io.err(`skillpin update: ${result.file} not written\n`);
    return EXIT.failed;
  }
  reportRefused(result.refused, io.err);
  const text = renderLockfile(result.lock);
  const changed = text !== result.before;
  if (changed) await writeFileAtomic(result.file, text);
  if (format === 'json') {
    const report: UpdateReport = { version: 1, lockfile: result.file, changed, sources: result.diffs };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
  } else if (format === 'markdown') {
    io.out(result.diffs.length === 0 ? 'No locked commit moved.\n' : renderMarkdown(result.diffs));
  } else {
    io.out(renderText(result.diffs));
    io.out(changed ? `updated ${result.file}\n` : `${result.file} is up to date\n`);
  }
  return changed ? EXIT.findings : EXIT.ok;
}
