import path from 'node:path';
import { buildFixtures } from '../fixtures-repos/build.ts';

/** Where the test run builds the fixture repositories (once per run, before any test file). */
export const TEST_FIXTURES_DIR = path.resolve(import.meta.dirname, '..', '.skillpin', 'test-fixtures');

export default async function setup(): Promise<void> {
  await buildFixtures(TEST_FIXTURES_DIR);
}
