import { expect } from 'vitest';

/** An ascending array held in fewer bytes (index/ascending.ts, index/gaps.ts). */
interface Held {
  toArray(): Uint32Array;
  at(at: number): number;
  indexOf(value: number): number;
}

/** Every place's value by at(), where indexOf finds each, and what it finds of values it does not hold. */
export function readBack(held: Held, values: Uint32Array, absent: number[]): void {
  expect([...held.toArray()]).toEqual([...values]);
  expect(Array.from(values.keys(), (at) => held.at(at))).toEqual([...values]);
  expect([...values].map((value) => held.indexOf(value))).toEqual([...values.keys()]);
  expect(absent.map((value) => held.indexOf(value))).toEqual(absent.map(() => -1));
}
