import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clearInitialEnviron } from '../../src/run/initialEnviron.ts';
import { PROJECT_ROOT } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

const MODULE = pathToFileURL(path.join(PROJECT_ROOT, 'src', 'run', 'initialEnviron.ts')).href;

describe('clearing the initial environment block', () => {
  it('leaves /proc/self/environ without a variable while process.env keeps every value', () => {
    // In a process of its own: the block cleared is that process's.
    const program = `
      import { readFileSync } from 'node:fs';
      const before = readFileSync('/proc/self/environ', 'latin1');
      const { clearInitialEnviron } = await import(${JSON.stringify(MODULE)});
      const status = clearInitialEnviron();
      const after = readFileSync('/proc/self/environ');
      process.stdout.write(JSON.stringify({
        status,
        secretBefore: before.includes('SKILLPIN_SCRUB_SECRET=hunter2'),
        afterBytes: after.length,
        afterNonZero: after.filter((byte) => byte !== 0).length,
        secret: process.env.SKILLPIN_SCRUB_SECRET,
        child: (await import('node:child_process')).execFileSync(process.execPath,
          ['-e', 'process.stdout.write(process.env.SKILLPIN_SCRUB_SECRET ?? "")'], { encoding: 'utf8' }),
      }));`;
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, SKILLPIN_SCRUB_SECRET: 'hunter2' },
      encoding: 'utf8',
    });
    const result = JSON.parse(output) as Record<string, unknown>;
    expect(result).toEqual({
      status: { state: 'scrubbed' },
      secretBefore: true,
      afterBytes: expect.any(Number),
      afterNonZero: 0,
      secret: 'hunter2',
      child: 'hunter2',
    });
    expect(result['afterBytes']).toBeGreaterThan(0);
  });

  it('reports why when the kernel will not have it, and changes nothing it could not finish', () => {
    const proc = tempDir('skillpin-proc-');
    expect(clearInitialEnviron({ proc })).toEqual({
      state: 'unscrubbed',
      detail: expect.stringMatching(new RegExp(`^cannot read ${proc}/stat: ENOENT`)),
    });
    writeFileSync(path.join(proc, 'stat'), '1 (node) S 0 0');
    expect(clearInitialEnviron({ proc })).toEqual({
      state: 'unscrubbed',
      detail: `${proc}/stat does not give the environment block's bounds`,
    });
    // Bounds given, but no mem to write: the block stays as it was.
    writeFileSync(
      path.join(proc, 'stat'),
      `1 (no de) S ${Array.from({ length: 50 }, (_, i) => i + 4).join(' ')}\n`,
    );
    mkdirSync(path.join(proc, 'mem'));
    expect(clearInitialEnviron({ proc })).toEqual({
      state: 'unscrubbed',
      detail: expect.stringMatching(new RegExp(`^cannot write ${proc}/mem: EISDIR`)),
    });
    expect(clearInitialEnviron({ platform: 'darwin' })).toEqual({
      state: 'not-applicable',
      detail: 'no /proc/<pid>/environ on this platform',
    });
  });
});
