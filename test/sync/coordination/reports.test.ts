import { describe, expect, it } from 'vitest';
import { agreementOf, parsedReport } from '../../../src/sync/coordination/reports.ts';

const REPLICA = 'host-a/4242/abc123';
const COMMIT = 'a'.repeat(40);
const SINCE = '2026-12-07T04:00:00.000Z';

describe('replica reports read from Redis', () => {
  it('keep what a replica writes: its id, pid, commit and times', () => {
    const text = JSON.stringify({ pid: 4242, commit: COMMIT, since: SINCE, at: 1_765_080_000_000 });
    expect(parsedReport(REPLICA, text)).toEqual({
      replica: REPLICA,
      host: 'host-a',
      pid: 4242,
      commit: COMMIT,
      since: SINCE,
      at: 1_765_080_000_000,
    });
  });

  it('show no text a Redis writer put in place of a time, and no pid that is not a number', () => {
    const forged = (since: unknown, pid: unknown = 1) =>
      parsedReport(REPLICA, JSON.stringify({ pid, commit: COMMIT, since, at: 1 }));
    expect(forged('\u001b[31mowned\u001b[0m')).toBeUndefined();
    expect(forged(`${SINCE} <script>`)).toBeUndefined();
    expect(forged('x'.repeat(100_000))).toBeUndefined();
    expect(forged(12)).toBeUndefined();
    expect(forged(SINCE, '4242; rm -rf')?.pid).toBe(0);
  });

  it('read an agreement only with a commit id and a time', () => {
    expect(agreementOf(JSON.stringify({ commit: COMMIT, at: SINCE }))).toEqual({ commit: COMMIT, at: SINCE });
    expect(agreementOf(JSON.stringify({ commit: COMMIT, at: 'yesterday, honest' }))).toBeNull();
    expect(agreementOf(JSON.stringify({ commit: 'main', at: SINCE }))).toBeNull();
    expect(agreementOf('{not json')).toBeNull();
  });
});
