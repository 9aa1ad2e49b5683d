import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Runs `work` with a private dataDir in the temp folder, removed afterwards: `lock`, `update`, `diff` and `check`
 * never touch the config's dataDir, so they run beside a serving process.
 */
export async function withScratch<T>(work: (dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'skillpin-pin-'));
  try {
    return await work(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
