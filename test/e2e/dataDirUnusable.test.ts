import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { cli } from '../helpers/cli.ts';
import { fixture } from '../helpers/fixtures.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

const catalog = fixture('catalog');
const source = { id: 'catalog', path: catalog.gitdir, commit: catalog.commits['c2']!, paths: ['skills'] };

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));
afterAll(() => void vi.unstubAllEnvs());

/** `serve` and `sync` of `config`: each one's status, stdout and stderr. */
const both = async (config: string) =>
  Promise.all(
    ['serve', 'sync'].map(async (command) => {
      const { status, stdout, stderr } = await cli(command, '--config', config);
      return [status, stdout, stderr];
    }),
  );

/** The one line `serve` and `sync` print, and exit 73 with. */
const refused = (line: string) => [
  [73, '', `skillpin: ${line}\n`],
  [73, '', `skillpin sync: ${line}\n`],
];

describe('a dataDir that cannot be created or written', () => {
  it('exits 73 naming it, its line in the config and the system reason, when a file is in the way', async () => {
    const file = path.join(tempDir('skillpin-inway-'), 'file');
    writeFileSync(file, '');
    const dataDir = path.join(file, 'data');
    const config = writeConfig({ dataDir, sources: [source] });
    expect(await both(config)).toEqual(
      refused(
        `cannot use dataDir ${dataDir} (from ${config}:1): mkdir ${dataDir}: not a directory (ENOTDIR)`,
      ),
    );
  });

  it('exits 73, without hanging, for a path under /proc (refused to root too)', async () => {
    const dataDir = `/proc/skillpin-test-${process.pid}/data`;
    const config = writeConfig({ dataDir, sources: [source] });
    expect(await both(config)).toEqual(
      refused(
        `cannot use dataDir ${dataDir} (from ${config}:1): mkdir ${path.dirname(dataDir)}: no such file or directory (ENOENT)`,
      ),
    );
  });

  it('names the default when the config sets no dataDir', async () => {
    const dir = tempDir('skillpin-default-');
    const config = path.join(dir, 'skillpin.yaml');
    writeFileSync(config, stringify({ sources: [source] }));
    writeFileSync(path.join(dir, '.skillpin'), '');
    const dataDir = path.join(dir, '.skillpin');
    expect(await both(config)).toEqual(
      refused(
        `cannot use dataDir ${dataDir} (from the default .skillpin beside ${config}): mkdir ${dataDir}/processes: not a directory (ENOTDIR)`,
      ),
    );
  });

  // chmod does not stop root: this one runs as an ordinary user only.
  it.runIf(process.getuid?.() !== 0)('exits 73 for a read-only folder', async () => {
    const parent = path.join(tempDir('skillpin-readonly-'), 'readonly');
    mkdirSync(parent);
    chmodSync(parent, 0o555);
    const dataDir = path.join(parent, 'data');
    const config = writeConfig({ dataDir, sources: [source] });
    try {
      expect(await both(config)).toEqual(
        refused(
          `cannot use dataDir ${dataDir} (from ${config}:1): mkdir ${dataDir}: permission denied (EACCES)`,
        ),
      );
    } finally {
      chmodSync(parent, 0o755);
    }
  });
});
