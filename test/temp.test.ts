import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from './helpers/temp.ts';

describe('temporary folders', () => {
  it('are made in the temp dir of the run (test/globalSetup.ts), which workers inherit', () => {
    expect(path.basename(tmpdir())).toMatch(/^skillpin-run-[A-Za-z0-9]{6}$/);
    expect(path.dirname(tempDir('skillpin-probe-'))).toBe(tmpdir());
  });

  it('made by the helpers are removed when the file ends', () => {
    const made = [tempDir(), tempDir()];
    expect(made.map(existsSync)).toEqual([true, true]);
    removeTempDirs();
    expect(made.map(existsSync)).toEqual([false, false]);
  });
});
