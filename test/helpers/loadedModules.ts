import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from './fixtures.ts';
import { tempDir } from './temp.ts';

/** What a process loaded: our files (relative to src/) and packages by name, each sorted, without duplicates. */
export interface Loaded {
  ours: string[];
  packages: string[];
}

/** What runs TypeScript in a test's child process: not skillpin's. */
const LOADER_PACKAGES = new Set(['esbuild', 'tsx']);
const SRC = path.join(PROJECT_ROOT, 'src');

/** `node` arguments that run skillpin's CLI from src/ recording what it loads, and the file it is recorded in. */
export function recordedCli(): { args: string[]; env: { SKILLPIN_RECORD_MODULES: string } } {
  const record = path.join(tempDir('skillpin-modules-'), 'loaded.txt');
  const recorder = path.join(PROJECT_ROOT, 'test', 'helpers', 'recordModules.ts');
  return {
    args: ['--import', 'tsx', '--import', recorder, path.join(SRC, 'cli.ts')],
    env: { SKILLPIN_RECORD_MODULES: record },
  };
}

const packageOf = (file: string) => {
  const rest = file.slice(file.lastIndexOf('/node_modules/') + '/node_modules/'.length).split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
};

/** Reads a finished process's record; throws when the process did not get to write all of it. */
export function loadedModules(record: string): Loaded {
  const lines = readFileSync(record, 'utf8').split('\n').filter(Boolean);
  if (lines.at(-1) !== 'exit') throw new Error(`${record}: the process did not record its exit`);
  const files = lines.filter((line) => line.startsWith('file:')).map((url) => fileURLToPath(url));
  const unique = (items: string[]) => [...new Set(items)].sort();
  return {
    ours: unique(files.filter((file) => file.startsWith(`${SRC}/`)).map((file) => path.relative(SRC, file))),
    packages: unique(
      files
        .filter((file) => file.includes('/node_modules/'))
        .map(packageOf)
        .filter((name) => !LOADER_PACKAGES.has(name)),
    ),
  };
}
