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

/** `npm start`'s script on a free port, once it serves; its stderr so far. */
async function started() {
  const port = await freePort();
  const start = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const { stderr } = await stderrUntil(
    start,
    (text) => text.includes('"msg":"serving MCP') || undefined,
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

  it('the server ends when the start process is killed abruptly (SIGKILL: nothing is forwarded)', async () => {
    const { port, start } = await started();
    start.kill('SIGKILL');
    await once(start, 'exit');
    await vi.waitFor(async () => expect(await refused(port)).toBe(true), { timeout: 20_000, interval: 100 });
  }, 120_000);
});
