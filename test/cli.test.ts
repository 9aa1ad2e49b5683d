import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../src/cli.ts';
import { EXIT } from '../src/shared/exitCodes.ts';
import { PROJECT_ROOT } from './helpers/fixtures.ts';

// A bug, injected where a command runs: the status command throws what no command expects.
vi.mock('../src/commands/status.ts', () => ({
  status: async () => {
    throw new TypeError('injected: a bug in a command');
  },
}));

describe('the process CLI (main)', () => {
  it('exits 70 (internal) on an error no command expected, its stack on stderr', async () => {
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    let status: number;
    try {
      status = await main(['status', '--config', path.join(PROJECT_ROOT, 'examples', 'skillpin.yaml')]);
    } finally {
      stderr.mockRestore();
    }
    expect(status).toBe(EXIT.internal);
    expect(written.join('')).toMatch(
      /^skillpin: internal error: TypeError: injected: a bug in a command\n {4}at .*test\/cli\.test\.ts/,
    );
  });
});
