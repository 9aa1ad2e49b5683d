import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { stringify } from 'yaml';
import { PROJECT_ROOT } from './fixtures.ts';
import { tempDir } from './temp.ts';

export type Era = 'modern' | 'legacy';
export const MODERN = '2026-07-28';

/**
 * One 2026-07-28 JSON-RPC request as a client POSTs it to /mcp (method and name headers, `_meta` envelope), to `url`
 * and with a bearer `token` when given.
 */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  { url = 'http://127.0.0.1/mcp', token }: { url?: string; token?: string } = {},
): Request {
  return new Request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-method': method,
      'mcp-protocol-version': MODERN,
      ...(typeof params['uri'] === 'string' ? { 'mcp-name': params['uri'] } : {}),
      ...(typeof params['name'] === 'string' ? { 'mcp-name': params['name'] } : {}),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
}

/** Writes a config file into a fresh temp folder; returns its path. */
export function writeConfig(config: Record<string, unknown>): string {
  const dir = tempDir('skillpin-test-');
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(file, stringify({ dataDir: path.join(dir, 'data'), ...config }));
  return file;
}

/**
 * How a test starts `skillpin` as a process: the bundle test/globalSetup.ts made of src/ for this run (with its
 * source maps), or src/cli.ts through tsx outside a test run.
 */
const testCli = process.env['SKILLPIN_TEST_CLI'];
export const CLI_ARGS =
  testCli === undefined ? ['--import', 'tsx', path.join(PROJECT_ROOT, 'src', 'cli.ts')] : [testCli];

function newClient(era: Era): Client {
  return new Client(
    { name: 'skillpin-test', version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
  );
}

/** Starts the real server over stdio and connects a client in `era`. */
export async function connectStdio(
  configFile: string,
  era: Era,
): Promise<{ client: Client; close(): Promise<void> }> {
  const client = newClient(era);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'serve', '--config', configFile],
    cwd: PROJECT_ROOT,
    env: process.env as Record<string, string>,
    stderr: 'ignore',
  });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

export interface HttpServerProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts the real server with --http on a free loopback port; resolves once it says where it serves. */
/**
 * What a child process's stderr says once `find` finds it there (stderr read so far is given to it at each chunk),
 * and the stderr read from then on; rejects when the child exits first or `timeoutMs` passes.
 */
export async function stderrUntil<T>(
  child: ChildProcess,
  find: (stderr: string) => T | undefined,
  timeoutMs = 30_000,
): Promise<{ found: T; stderr: () => string }> {
  let stderr = '';
  const found = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not found on stderr in ${timeoutMs} ms:\n${stderr}`)),
      timeoutMs,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const value = find(stderr);
      if (value !== undefined) {
        clearTimeout(timer);
        resolve(value);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} first:\n${stderr}`));
    });
  });
  return { found, stderr: () => stderr };
}

export async function startHttp(
  configFile: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<HttpServerProcess> {
  const child = spawn(
    process.execPath,
    [...CLI_ARGS, 'serve', '--config', configFile, '--http', '127.0.0.1:0', ...extraArgs],
    { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  const { found: url, stderr } = await stderrUntil(
    child,
    (text) => /"url":"(http:\/\/[^"]+)"/.exec(text)?.[1],
    timeoutMs,
  );
  return {
    url,
    child,
    stderr,
    stop: () =>
      new Promise<void>((resolve) => {
        // Ended already (exited, or killed by a signal): nothing to wait for.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function connectHttp(
  url: string,
  era: Era,
  token?: string,
): Promise<{ client: Client; close(): Promise<void> }> {
  const client = newClient(era);
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token === undefined ? {} : { authProvider: { token: async () => token } },
    ),
  );
  return { client, close: () => client.close() };
}
