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

/** One 2026-07-28 JSON-RPC request as a client POSTs it to /mcp (method and name headers, `_meta` envelope). */
export function modernRequest(method: string, params: Record<string, unknown> = {}): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-method': method,
      'mcp-protocol-version': MODERN,
      ...(typeof params['uri'] === 'string' ? { 'mcp-name': params['uri'] } : {}),
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
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(stderr);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
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
