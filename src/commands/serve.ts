import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog, type Catalog } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { describeGitBackend } from '../git/index.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import { ListenError, startHttpServer } from '../http/server.ts';
import { cachePolicy } from '../mcp/cache.ts';
import { observeRequests } from '../mcp/observe.ts';
import { createServerFactory } from '../mcp/server.ts';
import type { Logger } from '../shared/log.ts';
import { DataDirBusyError, lockDataDir } from '../sync/lock.ts';
import { createSyncWorker } from '../sync/worker.ts';

/** Exit status when serve cannot start: dataDir in use, or the port cannot be opened. */
export const SERVE_CANNOT_START = 2;

const isLocal = (source: SourceConfig) => source.location.kind === 'local';
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
): Promise<number | undefined> {
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
  // Metrics are served over HTTP only, and only when asked for; they read the worker's status when scraped.
  const metrics: Metrics | undefined =
    http !== undefined && config.http.metrics
      ? createMetrics({ catalog, status: () => worker.status() })
      : undefined;
  const worker = createSyncWorker({
    config,
    catalog,
    logger,
    ...(metrics === undefined ? {} : { onSynced: (outcome, seconds) => metrics.synced(outcome, seconds) }),
  });
  await worker.restore();
  const made = createServerFactory({
    catalog,
    logger,
    pageSize: config.pageSize,
    cache: cachePolicy(config.cache, config.sources),
    tools: config.tools,
    prompts: config.prompts,
    ...(metrics === undefined
      ? {}
      : { onRead: (source: string, bytes: number) => metrics.served(source, bytes) }),
  });
  const factory =
    metrics === undefined
      ? made
      : observeRequests(made, (method, outcome, seconds) => metrics.requested(method, outcome, seconds));
  const syncRemotes = () => void worker.syncAll('start', (source) => !isLocal(source));

  if (http === undefined) {
    await worker.syncAll('start', isLocal);
    serveStdio(factory, { onerror: (error) => logger.debug({ err: error.message }, 'stdio') });
    logger.info(
      { skills: skillsOf(catalog), sources: config.sources.length, git },
      `serving MCP over stdio (git backend: ${git.backend}, ${git.reason})`,
    );
    syncRemotes();
    // The stdio binding: exit promptly once the client closes stdin. A sync cut short is redone next start.
    const exit = (why: string) => () => {
      logger.info({ why }, 'shutting down');
      logger.flush();
      process.exit(0);
    };
    process.stdin.once('end', exit('stdin closed'));
    process.once('SIGINT', exit('SIGINT'));
    process.once('SIGTERM', exit('SIGTERM'));
    return undefined;
  }

  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      ...http,
      factory,
      catalog,
      logger,
      worker,
      ...(config.webhook === undefined ? {} : { webhook: config.webhook }),
      sources: config.sources,
      status: () => worker.status(),
      pending: () => worker.pending(),
      ...(config.http.allowedHosts === undefined ? {} : { allowedHosts: config.http.allowedHosts }),
      ...(config.http.allowedOrigins === undefined ? {} : { allowedOrigins: config.http.allowedOrigins }),
      ...(metrics === undefined ? {} : { metrics }),
    });
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    io.err(`skillpin: ${error.message}\n`);
    lock.release();
    return SERVE_CANNOT_START;
  }
  await worker.syncAll('start', isLocal);
  const page = new URL('/', server.url).href;
  // A wildcard bind is named by loopback; other machines use this host's name (allowed in http.allowedHosts).
  const everywhere = new URL(server.url).host === server.listening ? '' : ', on every interface';
  logger.info(
    {
      url: server.url,
      listening: server.listening,
      skills: skillsOf(catalog),
      sources: config.sources.length,
      git,
    },
    `serving MCP over Streamable HTTP at ${server.url}${everywhere} (status page ${page}; git backend: ${git.backend}, ${git.reason})`,
  );
  syncRemotes();
  // Running syncs are not waited for (a dripping remote would hold the exit): one cut short is redone next start.
  const stop = (signal: string) => () => {
    logger.info({ signal }, 'shutting down');
    void worker.stop();
    void server.close().then(() => {
      logger.flush();
      process.exit(0);
    });
  };
  process.once('SIGINT', stop('SIGINT'));
  process.once('SIGTERM', stop('SIGTERM'));
  return undefined;
}
