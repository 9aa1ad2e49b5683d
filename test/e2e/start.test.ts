import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { PROJECT_ROOT } from '../helpers/fixtures.ts';
import { stderrUntil } from '../helpers/server.ts';

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

const refused = async (port: number) => {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch((error: Error) => error);
  return response instanceof Error;
};

/** `npm start`'s script on `port`. */
const startOn = (port: number) =>
  spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });

/** `npm start`'s script on a free port, once it serves and said so (its banner ends with Ctrl-C's line); its stderr so far. */
async function started() {
  const port = await freePort();
  const start = startOn(port);
  const { stderr } = await stderrUntil(
    start,
    (text) => /"msg":"serving MCP[^\n]*\n(?:.*\n)* {2}Stop with Ctrl-C\.\n.*\n/.test(text) || undefined,
    120_000,
  );
  return { port, start, stderr: stderr() };
}

describe('npm start (scripts/start.ts)', () => {
  it('names the broken example skills in one line, logs no error, and the server ends on SIGTERM', async () => {
    const { port, start, stderr } = await started();
    expect(stderr.split('\n')).toContain(
      `skillpin example: the example includes broken skills on purpose: see them on the status page http://127.0.0.1:${port}/ or with \`node bin/skillpin.js status -c examples/skillpin.yaml\``,
    );
    expect(stderr).not.toContain('"level":"error"');
    expect(await refused(port)).toBe(false);
    start.kill('SIGTERM');
    const [code] = (await once(start, 'exit')) as [number | null];
    expect([code, await refused(port)]).toEqual([0, true]);
  }, 120_000);

  it('shows its banner only once the port is listening, after the line saying it serves', async () => {
    const { start, stderr } = await started();
    const lines = stderr.split('\n');
    const serving = lines.findIndex((line) => line.includes('"msg":"serving MCP'));
    expect(
      lines.findIndex((line) => line.startsWith('skillpin example: serving the fixture repositories')),
    ).toBe(serving + 1);
    start.kill('SIGTERM');
    await once(start, 'exit');
  }, 120_000);

  it("on a port in use, ends with skillpin's own line and status 69, and no banner", async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      const start = startOn(port);
      let stderr = '';
      start.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const [code] = (await once(start, 'exit')) as [number | null];
      // The server's JSON log lines (a lease an earlier test's server left, taken over) are not what is asserted.
      const lines = stderr
        .split('\n')
        .filter((line) => !line.startsWith('skillpin example: building') && !line.startsWith('{'));
      expect([code, lines]).toEqual([
        69,
        [
          `skillpin: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE)`,
          'skillpin example: not serving: skillpin exited with status 69 (docs/exit-codes.md); PORT=<port> npm start serves on another port',
          '',
        ],
      ]);
    } finally {
      taken.close();
    }
  }, 120_000);

  it('the server ends when the start process is killed abruptly (SIGKILL: nothing is forwarded)', async () => {
    const { port, start } = await started();
    start.kill('SIGKILL');
    await once(start, 'exit');
    await vi.waitFor(async () => expect(await refused(port)).toBe(true), { timeout: 20_000, interval: 100 });
  }, 120_000);
});
