import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BuiltFixture } from '../../fixtures-repos/build.ts';

export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where test/globalSetup.ts builds the fixture repositories, once per run. */
export const TEST_FIXTURES_DIR = path.join(PROJECT_ROOT, '.skillpin', 'test-fixtures');

/** The fixture repositories test/globalSetup.ts built for this run. */
export function fixtures(): Record<string, BuiltFixture> {
  return JSON.parse(readFileSync(path.join(TEST_FIXTURES_DIR, 'fixtures.json'), 'utf8')) as Record<
    string,
    BuiltFixture
  >;
}

export function fixture(name: string): BuiltFixture {
  const found = fixtures()[name];
  if (found === undefined) throw new Error(`no fixture repository ${name}`);
  return found;
}

/** The bytes fixtures-repos/ holds for `file` in the tree folder `tree` of `repo`: an oracle apart from git. */
export function fixtureFile(repo: string, tree: string, file: string): Buffer {
  return readFileSync(path.join(PROJECT_ROOT, 'fixtures-repos', repo, tree, file));
}
