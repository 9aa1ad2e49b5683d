import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { type Serving, type ServeOptions, startServing } from '../../src/commands/serve.ts';
import { servedConfig } from '../../src/pins/pinning.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import type { McpEndpoint } from '../../src/http/mcpEndpoint.ts';
import type { ServerFactory } from '../../src/mcp/server.ts';
import type { LogLevel } from '../../src/shared/log.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { type Era, MODERN } from './server.ts';

export interface InProcessOptions {
  /** Where to listen (default 127.0.0.1:0); `false`: MCP over an in-memory connection instead. */
  http?: { host: string; port: number } | false;
  /** `--locked`: serve exactly the lockfile's commits. */
  locked?: boolean;
  allowUnauthenticated?: boolean;
  /** The environment the config's `${NAME}` references read (default: this process's). */
  env?: Record<string, string>;
  /** What the server logs (default info), read back with `logs()`. */
  logLevel?: LogLevel;
  /** Another dataDir than the config's: replicas share a config, not a dataDir. */
  dataDir?: string;
  clock?: ServeOptions['clock'];
  onSettled?: ServeOptions['onSettled'];
}

export interface InProcessServer {
  serving: Serving;
  /** The MCP endpoint (HTTP only). */
  url: string;
  /** The JSON lines the server logged so far. */
  logs(): string;
  /** A client connected over the in-memory connection (`http: false` only). */
  connect(era: Era): Promise<Client>;
  stop(): Promise<void>;
}

/** The config as `skillpin serve --config <file> [--locked]` loads it, and again on each reload. */
function configLoader(file: string, options: InProcessOptions): () => Promise<Config> {
  const env = options.env === undefined ? process.env : { ...process.env, ...options.env };
  return async () => {
    const config = await servedConfig(loadConfig(file, env), options.locked === true);
    return options.dataDir === undefined ? config : { ...config, dataDir: options.dataDir };
  };
}

/** `skillpin serve` in this process, through the same function the CLI calls. */
export async function serveInProcess(
  configFile: string,
  options: InProcessOptions = {},
): Promise<InProcessServer> {
  let logged = '';
  const logger = createLogger({
    level: options.logLevel ?? 'info',
    format: 'json',
    destination: { write: (line) => void (logged += line) },
  });
  const reread = configLoader(configFile, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const serving = await startServing(await reread(), {
    logger,
    reread,
    http: options.http === false ? undefined : (options.http ?? { host: '127.0.0.1', port: 0 }),
    transport: serverSide,
    allowUnauthenticated: options.allowUnauthenticated,
    clock: options.clock,
    onSettled: options.onSettled,
  });
  let connected = false;
  return {
    serving,
    url: serving.url ?? '',
    logs: () => logged,
    async connect(era) {
      if (options.http !== false || connected) throw new Error('one in-memory client, with http: false');
      connected = true;
      const client = new Client(
        { name: 'skillpin-test', version: '1.0.0' },
        era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN } } } : {},
      );
      await client.connect(clientSide);
      return client;
    },
    stop: () => serving.close(),
  };
}

/** A client of `skillpin serve` in this process over an in-memory connection, as a stdio host connects. */
export async function connectInProcess(
  configFile: string,
  era: Era,
  options: Omit<InProcessOptions, 'http'> = {},
): Promise<{ client: Client; server: InProcessServer; close(): Promise<void> }> {
  const server = await serveInProcess(configFile, { ...options, http: false });
  const client = await server.connect(era);
  return {
    client,
    server,
    close: async () => {
      await client.close();
      await server.stop();
    },
  };
}

/** A whole web request to an MCP endpoint: its head, and its body as the listener hands it over (raw bytes). */
export const handled = async (endpoint: McpEndpoint, request: Request, peer: string, authInfo?: AuthInfo) =>
  endpoint.handle(request, new Uint8Array(await request.arrayBuffer()), peer, authInfo);

/** `factory` counting the servers it makes; what it answers without one (`answerDirect`) kept as it is. */
export function countingServers(factory: ServerFactory): { factory: ServerFactory; made(): number } {
  let made = 0;
  const counting: ServerFactory = (context) => {
    made++;
    return factory(context);
  };
  counting.answerDirect = factory.answerDirect;
  return { factory: counting, made: () => made };
}
