import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { INDEX_VERSION, indexCommit, indexStore } from '../../src/index/index.ts';
import { fixture } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

const scripts = fixture('scripts');
const c1 = scripts.commits['c1']!;

async function indexed() {
  const repo = await openLocalRepository(scripts.gitdir);
  return indexCommit({ ...(await walkCommit(repo, c1)), readBlob: (id) => readBlob(repo, id) });
}

describe('declarations in the index', () => {
  it("carries each skill's accepted declaration and reports the refused and odd ones", async () => {
    const index = await indexed();
    expect(index.version).toBe(4);
    const declared = Object.fromEntries(index.skills.map((skill) => [skill.dir, skill.declaration]));
    expect(declared).toEqual({
      'other/impostor': {
        scripts: [{ script: 'scripts/env.js', interpreter: 'node', env: ['PROBE_TOKEN'] }],
        egress: [],
      },
      'skills/bounds': {
        scripts: [
          { script: 'scripts/argv.js', interpreter: 'node', env: [] },
          { script: 'scripts/empty.js', interpreter: 'node', env: [] },
          { script: 'scripts/flood.js', interpreter: 'node', env: [] },
          { script: 'scripts/sleep.js', interpreter: 'node', env: [], timeout: 1 },
          { script: 'scripts/detach.js', interpreter: 'node', env: [], timeout: 5 },
          { script: 'scripts/fail.js', interpreter: 'node', env: [] },
          { script: 'scripts/slow.js', interpreter: 'node', env: [], timeout: 900 },
        ],
        egress: ['api.example.invalid'],
      },
      'skills/broken-declaration': undefined,
      'skills/env-probe': {
        scripts: [{ script: 'scripts/env.js', interpreter: 'node', env: ['PROBE_TOKEN', 'PROBE_UNSET'] }],
        egress: [],
      },
      'skills/missing-script': {
        scripts: [{ script: 'scripts/here.js', interpreter: 'node', env: [] }],
        egress: [],
      },
      'skills/odd-keys': { scripts: [{ script: 'scripts/ok.js', interpreter: 'node', env: [] }], egress: [] },
      'skills/pdf-tools': {
        scripts: [{ script: 'scripts/extract.py', interpreter: 'python3', env: [] }],
        egress: [],
      },
    });
    expect(
      index.problems
        .filter((p) => p.reason === 'declaration' || p.reason === 'declared-script-missing')
        .map((p) => [p.path, p.reason, p.detail]),
    ).toEqual([
      [
        'skills/broken-declaration/SKILL.md',
        'declaration',
        "mcp-host.version 2 is not a version this server reads (1); the skill's scripts are not declared",
      ],
      [
        'skills/missing-script/scripts/gone.js',
        'declared-script-missing',
        'mcp-host declares scripts/gone.js, which is not a file of the skill; it cannot run',
      ],
      [
        'skills/odd-keys/SKILL.md',
        'declaration',
        'keys this server does not read were ignored: mcp-host.sandbox, mcp-host.run[0].shell',
      ],
    ]);
  });

  it('rebuilds an index file of an older format (3: symlinks to skills not followed) instead of serving it', async () => {
    const index = await indexed();
    const dir = tempDir('skillpin-index-');
    const store = indexStore(dir);
    const options = { paths: [], strictNames: false };
    await store.save(index, options);
    expect(await store.load(c1, options)).toEqual(index);
    const file = path.join(dir, `${c1}.json`);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { index: { version: number } };
    stored.index.version = 3;
    writeFileSync(file, JSON.stringify(stored));
    expect(INDEX_VERSION).toBe(4);
    expect(await store.load(c1, options)).toBeUndefined();
  });
});
