import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BuiltFixture } from '../../fixtures-repos/build.ts';

export const TEST_FIXTURES_DIR = path.resolve(import.meta.dirname, '..', '..', '.skillpin', 'test-fixtures');
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

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
