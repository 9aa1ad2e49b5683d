import { describe, expect, it } from 'vitest';
import { batched } from '../../src/shared/serial.ts';

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('batched', () => {
  it('takes the asks of one turn together, and every ask made while a run runs in one run after it', async () => {
    const runs: number[][] = [];
    const first = gate();
    const started = gate();
    const run = batched<number>(async (asks) => {
      runs.push([...asks]);
      if (runs.length === 1) {
        started.open();
        await first.opened;
      }
    });
    const settled: number[] = [];
    const ask = (n: number) => run(n).then(() => void settled.push(n));
    const asked = [ask(1), ask(2)];
    await started.opened;
    asked.push(ask(3), ask(4), ask(5));
    expect(runs).toEqual([[1, 2]]);
    first.open();
    await Promise.all(asked);
    expect(runs).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    expect(settled).toEqual([1, 2, 3, 4, 5]);
  });

  it('settles each ask with the error of the run that carried it, and runs the next anyway', async () => {
    let calls = 0;
    const run = batched<string>(async (asks) => {
      calls++;
      if (asks.includes('bad')) throw new Error(`failed: ${asks.join(',')}`);
    });
    const bad = run('bad');
    await expect(bad).rejects.toThrow('failed: bad');
    await expect(run('good')).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
