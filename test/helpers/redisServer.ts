import { type ChildProcess, spawn } from 'node:child_process';
import { createClient } from '@redis/client';
import { createServer } from 'node:net';
import { tempDir } from './temp.ts';

/** A real `redis-server` (Debian's package) on a free loopback port, nothing persisted, in a temp folder. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** Stops it at once (SIGKILL: what a crashed Redis looks like to its clients); `start()` brings it back. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  close(): Promise<void>;
  /** A connected client for a test to look at what the replicas wrote; it sees Redis go down too, so its errors are
   * dropped. The test closes it. */
  probe(): Promise<RedisProbe>;
}

/** A client for looking at a test's Redis; its errors (a Redis killed on purpose) are dropped. */
async function connectProbe(url: string, password: string | undefined) {
  const client = createClient({ url, password });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export type RedisProbe = Awaited<ReturnType<typeof connectProbe>>;

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRedisServer(options: { password?: string } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = tempDir('skillpin-redis-');
  let child: ChildProcess | undefined;
  const start = async () => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ];
    if (options.password !== undefined) args.push('--requirepass', options.password);
    const started = spawn('redis-server', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      started.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
      started.once('error', reject);
      started.once('exit', (code) =>
        reject(new Error(`redis-server exited (${code}): ${output.slice(-500)}`)),
      );
    });
    started.stdout!.resume();
    started.stderr!.resume();
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      running.kill('SIGKILL');
    });
  };
  await start();
  const url = `redis://127.0.0.1:${port}`;
  return { url, kill, start, close: kill, probe: () => connectProbe(url, options.password) };
}
