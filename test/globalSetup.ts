import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildFixtures } from '../fixtures-repos/build.ts';
import { TEST_FIXTURES_DIR } from './helpers/fixtures.ts';

// Each vitest project runs this file; the run does its work once.
const RUN = Symbol.for('skillpin.test-run');
const state = globalThis as { [RUN]?: true };

/** Once per run: the fixture repositories, and a temp dir of the run's own, removed when the run ends. */
export default async function setup(): Promise<() => void> {
  if (state[RUN]) return () => undefined;
  state[RUN] = true;
  const runDir = mkdtempSync(path.join(tmpdir(), 'skillpin-run-'));
  // Test workers and every process a test starts inherit it, so os.tmpdir(), git and tsx all write there.
  process.env['TMPDIR'] = runDir;
  await buildFixtures(TEST_FIXTURES_DIR);
  return () => rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
}
