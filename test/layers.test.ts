import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './helpers/fixtures.ts';

/** The layers, bottom to top (docs/development.md lists them): a file may import its own layer and those before it. */
const LAYERS = [
  'shared',
  'config',
  'git',
  'skills',
  'index',
  'catalog',
  'sync',
  'pins',
  'run',
  'mcp',
  'http',
  'commands',
  'cli.ts',
];
/** skills/ (pure rules) and shared/ (leaf helpers) depend on nothing of ours but the leaf modules. */
const ONLY: Record<string, string[]> = { shared: ['shared'], skills: ['shared', 'skills'] };

const SRC = path.join(PROJECT_ROOT, 'src');

function layerOf(file: string): string {
  const first = path.relative(SRC, file).split(path.sep)[0]!;
  if (!LAYERS.includes(first))
    throw new Error(`${path.relative(PROJECT_ROOT, file)} is in no layer (docs/development.md)`);
  return first;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(path.join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [path.join(dir, entry.name)]
        : [],
  );
}

/** Every `from '…'` and `import('…')` of our own files. */
function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((specifier) => path.resolve(path.dirname(file), specifier));
}

describe('layers', () => {
  it('no file in src/ imports a layer above its own', () => {
    const wrong: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const mine = layerOf(file);
      for (const target of localImports(file)) {
        const theirs = layerOf(target);
        const allowed = ONLY[mine]?.includes(theirs) ?? LAYERS.indexOf(theirs) <= LAYERS.indexOf(mine);
        if (!allowed)
          wrong.push(
            `${path.relative(SRC, file)} (${mine}) imports ${path.relative(SRC, target)} (${theirs})`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });

  it("sync/'s own rooms (dataDir/, coordination/) import nothing of sync/ above them: the owner seam adapts both", () => {
    const SYNC = path.join(SRC, 'sync');
    const wrong: string[] = [];
    for (const room of ['dataDir', 'coordination'])
      for (const file of sourceFiles(path.join(SYNC, room)))
        for (const target of localImports(file))
          if (path.dirname(target) === SYNC)
            wrong.push(`${path.relative(SRC, file)} imports ${path.relative(SRC, target)}`);
    expect(wrong).toEqual([]);
  });

  it("only sync/served.ts changes the worker's state (its fields are readonly elsewhere)", () => {
    const assigned = /\bw\.(records|listings|running|base|stopped)\s*=[^=]/;
    const wrong = sourceFiles(path.join(SRC, 'sync')).filter((file) =>
      assigned.test(readFileSync(file, 'utf8')),
    );
    expect(wrong.map((file) => path.relative(SRC, file))).toEqual([]);
  });

  it('knows every folder of src/', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).map((entry) => entry.name);
    expect(folders.filter((name) => !LAYERS.includes(name))).toEqual([]);
  });
});
