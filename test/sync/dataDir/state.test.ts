import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp.ts';
import { openStateFile, type SyncState } from '../../../src/sync/dataDir/state.ts';

const dirs: string[] = [];
const dataDir = () => {
  const dir = tempDir('skillpin-state-');
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
/** States of different lengths: writes that interleave in one temp file leave invalid JSON behind. */
const stateOf = (sources: number, commit: string): SyncState => ({
  version: 1,
  sources: Object.fromEntries(
    Array.from({ length: sources }, (_, i) => [`source-${i}`, { current: commit, retained: [] }]),
  ),
});

describe('state.json', () => {
  it('takes 2000 concurrent pairs of writes: none rejected, no read sees a corrupt file, the last one wins', async () => {
    const dir = dataDir();
    const state = openStateFile(dir);
    await state.write(stateOf(1, A));
    let rejected = 0;
    let corrupt = 0;
    const pairs = Array.from({ length: 2000 }, (_, pair) =>
      pair % 2 === 0 ? [stateOf(8, A), stateOf(1, B)] : [stateOf(1, B), stateOf(8, A)],
    );
    await Promise.all(
      pairs.flatMap((pair) => [
        ...pair.map((one) => state.write(one).catch(() => void rejected++)),
        state.read().then((read) => void (read.found === 'state' || corrupt++)),
      ]),
    );
    expect({ rejected, corrupt }).toEqual({ rejected: 0, corrupt: 0 });
    expect(await state.read()).toEqual({ found: 'state', state: pairs.at(-1)![1] });
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('reads as nothing when missing, and as corrupt (with why) when it is not JSON or not a state', async () => {
    const dir = dataDir();
    const state = openStateFile(dir);
    expect(await state.read()).toEqual({ found: 'nothing', state: { version: 1, sources: {} } });
    const file = path.join(dir, 'state.json');
    writeFileSync(file, '{"version":1,"sources":{"a":{"current":"');
    expect(await state.read()).toMatchObject({ found: 'corrupt', state: { version: 1, sources: {} } });
    expect(((await state.read()) as { detail: string }).detail).toMatch(/JSON/);
    for (const wrong of [
      { version: 2, sources: {} },
      { version: 1, sources: { a: { current: 'HEAD', retained: [] } } },
      {
        version: 1,
        sources: { a: { retained: [], lastError: { reason: 'no-such-reason', detail: '', at: '' } } },
      },
    ]) {
      writeFileSync(file, JSON.stringify(wrong));
      expect((await state.read()).found).toBe('corrupt');
    }
    const good = {
      version: 1,
      sources: {
        a: {
          current: A,
          retained: [B],
          lastSync: '2024-05-01T00:00:00.000Z',
          lastError: { reason: 'source-timeout', detail: 'slow', at: '2024-05-01T00:00:00.000Z' },
        },
      },
    };
    writeFileSync(file, JSON.stringify(good));
    expect(await state.read()).toEqual({ found: 'state', state: good });
  });

  it('writes the state as indented JSON', async () => {
    const dir = dataDir();
    await openStateFile(dir).write(stateOf(1, A));
    expect(readFileSync(path.join(dir, 'state.json'), 'utf8')).toBe(
      `${JSON.stringify(stateOf(1, A), null, 2)}\n`,
    );
  });
});
