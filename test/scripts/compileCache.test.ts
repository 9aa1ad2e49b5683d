import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheDir, flagsBeforeCompile, OTHER_COMMANDS, requireCached } from '../../bin/compileCache.js';
import { program } from '../../src/cli.ts';
import { heapGrowthFlag } from '../../src/shared/heapGrowth.ts';
import { fixture, PROJECT_ROOT } from '../helpers/fixtures.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

/** A CommonJS file in a folder of its own, as dist/cli.cjs is: `module.exports` of `body`. */
function commonJs(body: string): string {
  const file = path.join(tempDir('skillpin-cjs-'), 'lib.cjs');
  writeFileSync(file, body);
  return file;
}

const caches = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.v8'));

const COMPILE_CACHE = path.join(PROJECT_ROOT, 'bin', 'compileCache.js');

/**
 * `file` loaded by requireCached in a process of its own (V8 keeps what one process compiled, whatever the cache
 * holds): how, `twice(n)` of its exports, and what `save()` wrote.
 */
function loadIn(file: string, dir: string, kind: string, n = 1): [string, number, string | null] {
  // The same node options each time: they are part of what a cache must fit.
  const script = `const { requireCached } = await import(${JSON.stringify(pathToFileURL(COMPILE_CACHE).href)});
    const [file, dir, kind, n] = process.argv.slice(1);
    const loaded = requireCached(file, { dir, kind });
    process.stdout.write(JSON.stringify([loaded.cache, loaded.exports.twice(Number(n)), loaded.save() ?? null]));`;
  const args = ['--input-type=module', '-e', script, file, dir, kind, String(n)];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8' }));
}

describe('requireCached: a CommonJS file compiled with the code cache of a run before', () => {
  const body =
    "module.exports = { twice: (n) => n * 2, here: __filename, required: typeof require('node:path').join };";

  it('compiles without one and leaves one; the next run compiles with it and writes nothing; exports alike', () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'cache');
    const [how, value, written] = loadIn(file, dir, 'run', 21);
    expect([how, value]).toEqual(['miss', 42]);
    expect(caches(dir)).toEqual([path.basename(written!)]);
    expect(loadIn(file, dir, 'run', 4)).toEqual(['hit', 8, null]);
    // Another kind of run (other flags set before compiling) has a cache of its own.
    expect(loadIn(file, dir, 'serve')[0]).toBe('miss');
    expect(caches(dir)).toHaveLength(2);
  });

  it('exports what `require` would, and writes once when asked twice', () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'cache');
    const loaded = requireCached(file, { dir, kind: 'run' });
    expect([loaded.exports.here, loaded.exports.required]).toEqual([file, 'function']);
    expect(path.basename(loaded.save()!)).toBe(caches(dir)[0]);
    expect(loaded.save()).toBeUndefined();
  });

  it('compiles afresh when V8 refuses the cache, and replaces it', () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'cache');
    const written = loadIn(file, dir, 'run')[2]!;
    writeFileSync(written, Buffer.alloc(statSync(written).size, 7));
    expect(loadIn(file, dir, 'run', 5)).toEqual(['rejected', 10, written]);
    expect(loadIn(file, dir, 'run', 5)).toEqual(['hit', 10, null]);
  });

  it("uses no cache of an earlier build of the file, and removes it when it writes the new build's", () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'cache');
    const old = loadIn(file, dir, 'run')[2]!;
    // A rebuilt file of the same length: V8 alone would take the old cache for it.
    writeFileSync(file, body.replace('n * 2', 'n * 3'));
    const [how, value, written] = loadIn(file, dir, 'run', 2);
    expect([how, value]).toEqual(['miss', 6]);
    expect(written).not.toBe(old);
    expect(caches(dir)).toEqual([path.basename(written!)]);
  });

  it('uses no folder that others can write, and writes nothing there', () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const loaded = requireCached(file, { dir, kind: 'run' });
    expect([loaded.cache, loaded.exports.twice(1), loaded.save()]).toEqual(['off', 2, undefined]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('requires the file as node does, with no cache, when stacks are mapped through source maps', () => {
    const file = commonJs(body);
    const dir = path.join(tempDir(), 'cache');
    process.setSourceMapsEnabled(true);
    try {
      const loaded = requireCached(file, { dir, kind: 'run' });
      expect([loaded.cache, loaded.exports.twice(3), loaded.save()]).toEqual(['off', 6, undefined]);
    } finally {
      process.setSourceMapsEnabled(false);
    }
  });
});

describe('where the cache goes and what is set before compiling', () => {
  it("is SKILLPIN_COMPILE_CACHE, none with 'off', else skillpin/compile in the user's cache folder", () => {
    expect(cacheDir({ SKILLPIN_COMPILE_CACHE: '/var/cache/x' })).toBe('/var/cache/x');
    expect(cacheDir({ SKILLPIN_COMPILE_CACHE: 'off' })).toBeUndefined();
    expect(cacheDir({ XDG_CACHE_HOME: '/home/a/.cache' })).toBe('/home/a/.cache/skillpin/compile');
  });

  it("bounds a serving process's heap growth as src/shared/heapGrowth.ts does, before compiling", () => {
    const serving = { serving: true, flags: [heapGrowthFlag([])] };
    expect(flagsBeforeCompile([], [])).toEqual(serving);
    expect(flagsBeforeCompile(['serve', '--config', 'a.yaml'], [])).toEqual(serving);
    expect(flagsBeforeCompile(['--config', 'a.yaml'], [])).toEqual(serving);
    expect(flagsBeforeCompile(['serve'], ['--heap-growing-percent=20'])).toEqual({
      serving: true,
      flags: [],
    });
    expect(flagsBeforeCompile(['--log-format', 'json', 'serve'], [])).toEqual(serving);
    const other = { serving: false, flags: [] };
    expect(flagsBeforeCompile(['check', '.'], [])).toEqual(other);
    expect(flagsBeforeCompile(['--log-format', 'json', 'status', '-c', 'a.yaml'], [])).toEqual(other);
    expect(flagsBeforeCompile(['--version'], [])).toEqual(other);
    expect(flagsBeforeCompile(['serve', '--help'], [])).toEqual(other);
  });

  it("knows every command of src/cli.ts's but serve", () => {
    const names = program().commands.map((command) => command.name());
    expect([...OTHER_COMMANDS].sort()).toEqual(names.filter((name) => name !== 'serve').sort());
  });
});

describe('bin/skillpin.js over stdio, as a host starts it', () => {
  // The package's layout under the project (for its node_modules): bin/ beside dist/cli.cjs, this run's bundle.
  const bundle = process.env['SKILLPIN_TEST_CLI']!;
  const root = mkdtempSync(`${path.dirname(bundle)}-pkg-`);
  mkdirSync(path.join(root, 'bin'));
  mkdirSync(path.join(root, 'dist'));
  for (const name of ['skillpin.js', 'compileCache.js'])
    copyFileSync(path.join(PROJECT_ROOT, 'bin', name), path.join(root, 'bin', name));
  copyFileSync(bundle, path.join(root, 'dist', 'cli.cjs'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const catalog = fixture('catalog');
  const config = writeConfig({
    sources: [{ id: 'catalog', path: catalog.gitdir, commit: catalog.commits['c2']!, paths: ['skills'] }],
  });

  async function listOnce(cache: string): Promise<number> {
    const client = new Client({ name: 'skillpin-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(root, 'bin', 'skillpin.js'), 'serve', '--config', config],
      env: { ...process.env, SKILLPIN_COMPILE_CACHE: cache } as Record<string, string>,
      stderr: 'ignore',
    });
    await client.connect(transport);
    try {
      return (await new SkillsClient(client).list()).skills.length;
    } finally {
      await client.close();
    }
  }

  it('leaves a cache when the first window closes; the next start compiles with it and writes nothing', async () => {
    const cache = path.join(tempDir(), 'compile');
    expect(await listOnce(cache)).toBe(7);
    const [written] = caches(cache);
    const before = statSync(path.join(cache, written!), { bigint: true });
    expect(await listOnce(cache)).toBe(7);
    expect(caches(cache)).toEqual([written]);
    const after = statSync(path.join(cache, written!), { bigint: true });
    // Accepted: not written again (a refused or missing cache is replaced at exit).
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
  });
});
