import { describe, expect, it } from 'vitest';
import { held } from '../../src/sync/held.ts';

describe('a value held once per key', () => {
  it("loads once for every caller; a load that fails is its own caller's: a waiter loads for itself", async () => {
    const values = held<{ by: string }>();
    const loads: string[] = [];
    const load =
      (by: string, fails = false) =>
      async () => {
        loads.push(by);
        if (fails) throw new Error(`${by}'s store lost the commit`);
        return { by };
      };
    const first = values.once('repo@c1', load('a', true));
    const second = values.once('repo@c1', load('b'));
    const third = values.once('repo@c1', load('c'));
    await expect(first).rejects.toThrow("a's store lost the commit");
    expect(await second).toEqual({ by: 'b' });
    // The third waited on a's load, then on b's: one value, held.
    expect(await third).toBe(await second);
    expect(loads).toEqual(['a', 'b']);
    expect(await values.once('repo@c1', load('d'))).toBe(await second);
    expect(loads).toEqual(['a', 'b']);
  });
});
