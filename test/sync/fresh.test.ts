import { describe, expect, it } from 'vitest';
import { fresh } from '../../src/sync/fresh.ts';

/** A run that counts its calls and answers the count. */
const counting = () => {
  let runs = 0;
  return { run: async () => ++runs, runs: () => runs };
};

describe('fresh', () => {
  it('answers a question asked before a run started with that run, and one asked after it with a run of its own', async () => {
    const answers = fresh<string, number>(new Map());
    const { run, runs } = counting();
    const asked = performance.now();
    expect(await answers.of('main', asked, run)).toBe(1);
    expect(await answers.of('main', asked, run)).toBe(1);
    expect(await answers.of('other', asked, run)).toBe(2);
    const later = performance.now() + 1;
    expect(await answers.of('main', later, run)).toBe(3);
    expect(await answers.of('main', undefined, run)).toBe(4);
    expect(runs()).toBe(4);
  });

  it('gives no one a failed run: the next asker runs it again', async () => {
    const answers = fresh<object, string>(new WeakMap());
    const key = {};
    const asked = performance.now();
    await expect(answers.of(key, asked, async () => Promise.reject(new Error('killed')))).rejects.toThrow(
      'killed',
    );
    expect(await answers.of(key, asked, async () => 'checked')).toBe('checked');
  });
});
