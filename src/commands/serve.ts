import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog, type Catalog } from '../catalog/index.ts';
import { type Config, isLoopbackHost, type SourceConfig } from '../config/index.ts';
import { describeGitBackend } from '../git/index.ts';
import { createAuthGate } from '../http/auth/gate.ts';
import { ListenError, MCP_PATH, startHttpServer } from '../http/server.ts';
import { createServerFactory } from '../mcp/server.ts';
import type { Logger } from '../shared/log.ts';
import { DataDirBusyError, lockDataDir } from '../sync/lock.ts';
import { createSyncWorker } from '../sync/worker.ts';

/** Exit status when serve cannot start: dataDir in use, or the port cannot be opened. */
export const SERVE_CANNOT_START = 2;

const isLocal = (source: SourceConfig) => source.location.kind === 'local';

/** Why serve will not bind `host` without `auth:`: said once, before anything starts. */
export function unauthenticatedRefusal(host: string, port: number): string {
  return (
    `refusing to serve ${host}:${port} without authentication: ${host} is reachable from other machines, and ` +
    'anyone who reaches it could list and read every source, private ones included (Host and Origin checks ' +
    'stop browsers, not other clients). Configure auth: (static tokens or an OAuth issuer; see the README), ' +
    'bind a loopback address such as 127.0.0.1, or pass --allow-unauthenticated when something in front of ' +
    'skillpin (a proxy, a private network) decides who may call it.'
  );
}
const skillsOf = (catalog: Catalog) => catalog.listed().reduce((sum, ns) => sum + ns.skills.length, 0);

/**
 * `skillpin serve`: serves what dataDir holds at once. Local sources (no network) sync before the first request
 * is answered; remote sources sync once the transport is open and join as each lands (list_changed), so a slow
 * remote never holds the others. Returns an exit status when it cannot start, `undefined` while it serves.
 */
export async function serve(
  config: Config,
  http: { host: string; port: number } | undefined,
  logger: Logger,
  io: { err: (text: string) => void },
  options: { allowUnauthenticated?: boolean } = {},
): Promise<number | undefined> {
  if (http !== undefined && config.auth === undefined && !isLoopbackHost(http.host)) {
    if (options.allowUnauthenticated !== true) {
      io.err(`skillpin: ${unauthenticatedRefusal(http.host, http.port)}\n`);
      return SERVE_CANNOT_START;
    }
    logger.warn(
      { host: http.host },
      'serving without authentication on a non-loopback address (--allow-unauthenticated)',
    );
  }
  let lock: Awaited<ReturnType<typeof lockDataDir>>;
  try {
    lock = await lockDataDir(config.dataDir, 'serve');
  } catch (error) {
    if (!(error instanceof DataDirBusyError)) throw error;
    io.err(`skillpin: ${error.message}\n`);
    return SERVE_CANNOT_START;
  }
  const git = await describeGitBackend(config.git);
  const catalog = createCatalog();
  const worker = createSyncWorker({ config, catalog, logger });
  await worker.restore();
  const factory = createServerFactory({
    catalog,
    logger,
    pageSize: config.pageSize,
    cache: config.cache,
    tools: config.tools,
    prompts: config.prompts,
  });
  const syncRemotes = () => void worker.syncAll('start', (source) => !isLocal(source));

  if (http === undefined) {
    // stdio is the local user's own process: auth: applies to HTTP only.
    await worker.syncAll('start', isLocal);
    serveStdio(factory, { onerror: (error) => logger.debug({ err: error.message }, 'stdio') });
    logger.info(
      { skills: skillsOf(catalog), sources: config.sources.length, git },
      `serving MCP over stdio (git backend: ${git.backend}, ${git.reason})`,
    );
    syncRemotes();
    // The stdio binding: exit promptly once the client closes stdin. A sync cut short is redone next start.
    const exit = () => process.exit(0);
    process.stdin.once('end', exit);
    process.once('SIGINT', exit);
    process.once('SIGTERM', exit);
    return undefined;
  }

  const auth =
    config.auth === undefined ? undefined : createAuthGate(config.auth, { logger, mcpPath: MCP_PATH });
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      ...http,
      ...(auth === undefined ? {} : { auth }),
      factory,
      catalog,
      logger,
      worker,
      ...(config.webhook === undefined ? {} : { webhook: config.webhook }),
      sources: config.sources,
      status: () => worker.status(),
      pending: () => worker.pending(),
      ...config.http,
    });
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    io.err(`skillpin: ${error.message}\n`);
    lock.release();
    return SERVE_CANNOT_START;
  }
  await worker.syncAll('start', isLocal);
  logger.info(
    {
      url: server.url,
      skills: skillsOf(catalog),
      sources: config.sources.length,
      git,
      auth: auth?.summary ?? null,
    },
    `serving MCP over Streamable HTTP at ${server.url} (git backend: ${git.backend}, ${git.reason})`,
  );
  syncRemotes();
  // Running syncs are not waited for (a dripping remote would hold the exit): one cut short is redone next start.
  const stop = () => {
    void worker.stop();
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return undefined;
}
