import type { SourceFailure } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import { renderLockfile } from '../pins/lockfile.ts';
import { type Relocked, relock } from '../pins/relock.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { writeFileAtomic } from '../shared/fs.ts';
import { plural } from '../shared/text.ts';

/** The sources that failed, one line each: why nothing was written. */
export function reportFailures(failures: readonly SourceFailure[], err: (text: string) => void): void {
  for (const failure of failures) err(`${failure.id}: FAILED ${failure.reason}: ${failure.detail}\n`);
}

/** The refs of `refs:` sources that are not locked, each with why (the others are locked). */
export function reportRefused(refused: Relocked['refused'], err: (text: string) => void): void {
  for (const { source, problem } of refused)
    err(`${source}: ${problem.path} not locked: ${problem.reason}: ${problem.detail}\n`);
}

/** `skillpin lock`: resolves every source and writes the lockfile; `failed` (nothing written) when one fails. */
export async function lock(
  config: Config,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  // Every source is resolved afresh: whatever the old lockfile holds (even a corrupt one) is replaced.
  const result = await relock(config, () => true, { ignorePrevious: true });
  if (result.failures.length > 0) {
    reportFailures(result.failures, io.err);
    io.err(`skillpin lock: ${result.file} not written\n`);
    return EXIT.failed;
  }
  await writeFileAtomic(result.file, renderLockfile(result.lock));
  reportRefused(result.refused, io.err);
  for (const entry of result.lock.sources)
    io.out(`${entry.id}: ${entry.commit} (${plural(entry.skills.length, 'skill')})\n`);
  io.out(`wrote ${result.file}\n`);
  return EXIT.ok;
}
