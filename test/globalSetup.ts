import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildFixtures } from '../fixtures-repos/build.ts';
import { bundle, CLI_FILE } from '../scripts/build.ts';
import { PROJECT_ROOT, TEST_FIXTURES_DIR } from './helpers/fixtures.ts';

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
  // bin/skillpin.js keeps V8's code cache in the run's dir, not in the user's cache folder.
  process.env['SKILLPIN_COMPILE_CACHE'] = path.join(runDir, 'compile-cache');
  // The skillpin processes tests start run from a bundle of src/ made now, as the package runs (a process started
  // through tsx spends most of a second compiling src/ first). It lives under the project, where node_modules is.
  const cli = path.join(PROJECT_ROOT, '.skillpin', 'test-cli', path.basename(runDir));
  await Promise.all([buildFixtures(TEST_FIXTURES_DIR), bundle(cli)]);
  process.env['SKILLPIN_TEST_CLI'] = path.join(cli, CLI_FILE);
  return () => {
    rmSync(cli, { recursive: true, force: true, maxRetries: 3 });
    rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
  };
}
