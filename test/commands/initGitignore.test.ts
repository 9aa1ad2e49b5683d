import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { makeRepo } from '../helpers/repo.ts';
import { tempDir } from '../helpers/temp.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));

const ENTRY = "# skillpin's dataDir: fetched repositories and indexes (skillpin init)\n/.skillpin/\n";
const next = (command: string) =>
  `Next: ${command} --http 127.0.0.1:3917, or give your MCP host the command ${command}\n`;

describe('skillpin init and .gitignore', () => {
  it('creates .gitignore beside the config with dataDir, and says Next in the README’s form (-c, absolute path)', async () => {
    const { dir } = makeRepo({ 'README.md': 'x\n' });
    const file = path.join(dir, 'skillpin.yaml');
    expect(await cli('init', file)).toEqual({
      status: 0,
      stdout:
        `wrote ${file}: the public anthropics/skills and this repository (.).\n` +
        'created .gitignore with /.skillpin/ (dataDir, not to commit).\n' +
        next(`skillpin serve -c ${file}`),
      stderr: '',
    });
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toBe(ENTRY);
  });

  it('appends once to an existing .gitignore, and leaves it as it is on the next init', async () => {
    const dir = tempDir('skillpin-init-');
    writeFileSync(path.join(dir, '.gitignore'), 'node_modules/');
    const file = path.join(dir, 'skillpin.yaml');
    const first = await cli('init', file);
    expect(first.stdout.split('\n')[1]).toBe('added to .gitignore: /.skillpin/ (dataDir, not to commit).');
    const again = await cli('init', '--force', file);
    expect([again.status, again.stdout.split('\n').length]).toEqual([0, 3]);
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toBe(`node_modules/\n${ENTRY}`);
  });

  it('leaves a .gitignore that ignores dataDir already in any form', async () => {
    for (const line of ['.skillpin', '.skillpin/', '/.skillpin', '  /.skillpin/  ']) {
      const dir = tempDir('skillpin-init-');
      writeFileSync(path.join(dir, '.gitignore'), `dist/\r\n${line}\r\n`);
      expect((await cli('init', path.join(dir, 'skillpin.yaml'))).status).toBe(0);
      expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toBe(`dist/\r\n${line}\r\n`);
    }
  });

  it('quotes a path a shell would split, and exits 73 when .gitignore cannot be written', async () => {
    const dir = path.join(tempDir('skillpin-init-'), "my skills's");
    mkdirSync(dir);
    const file = path.join(dir, 'skillpin.yaml');
    const written = await cli('init', file);
    expect(written.stdout.split('\n')[2]).toBe(
      next(`skillpin serve -c '${file.replaceAll("'", "'\\''")}'`).trimEnd(),
    );
    const blocked = tempDir('skillpin-init-');
    // A folder where .gitignore would be: it cannot be read or written, as root too.
    mkdirSync(path.join(blocked, '.gitignore'));
    expect(await cli('init', path.join(blocked, 'skillpin.yaml'))).toEqual({
      status: 73,
      stdout: `wrote ${path.join(blocked, 'skillpin.yaml')}: the public anthropics/skills and a local source to enable once this folder is a git repository.\n`,
      stderr: `skillpin init: ${path.join(blocked, '.gitignore')} cannot be written (EISDIR); add /.skillpin/ to it yourself\n`,
    });
  });
});
