import type { FetchProgress } from '../repository.ts';

const UNITS: Record<string, number> = { bytes: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

/**
 * One line of git's `--progress` output as progress: "Receiving objects:  45% (450/1000), 1.20 MiB | 3.00 MiB/s"
 * or the server's "remote: Counting objects: 100% (5/5), done.". Other lines are not progress.
 */
export function parseProgress(line: string): FetchProgress | undefined {
  const match =
    /^(?:remote: )?([A-Z][A-Za-z ]+):\s+\d+% \((\d+)\/(\d+)\)(?:, ([\d.]+) (bytes|KiB|MiB|GiB))?/.exec(line);
  if (match === null) return undefined;
  const [, phase, loaded, total, amount, unit] = match;
  return {
    phase: phase!,
    loaded: Number(loaded),
    total: Number(total),
    bytes: amount === undefined ? undefined : Math.round(Number(amount) * UNITS[unit!]!),
  };
}
