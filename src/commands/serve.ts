import { isDeepStrictEqual } from 'node:util';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog, type Catalog } from '../catalog/index.ts';
import { type Config, ConfigError, isLoopbackHost, type SourceConfig } from '../config/index.ts';
import { describeGitBackend } from '../git/index.ts';
import { createAuthGate } from '../http/auth/gate.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import { ListenError, MCP_PATH, startHttpServer } from '../http/server.ts';
import { cachePolicy } from '../mcp/cache.ts';
import { observeRequests } from '../mcp/observe.ts';
import { runOptionsFor } from '../mcp/run/setup.ts';
import { createServerFactory } from '../mcp/server.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { joinDataDir, type Membership } from '../sync/membership.ts';
import { DataDirConflictError } from '../sync/processes.ts';
import { createSyncWorker, type SyncWorker } from '../sync/worker.ts';

/** Exit status when serve cannot start: a source defined otherwise by another process on dataDir, or the port. */
export const SERVE_CANNOT_START = 2;

const isLocal = (source: SourceConfig) => source.location.kind === 'local';

/** Settings a running server took at its start: a reload that changes them says they wait for a restart. */
export function settingsNeedingRestart(running: Config, next: Config): string[] {
  const keys = [
    'dataDir',
    'lock',
    'pageSize',
    'tools',
    'prompts',
    'maxPrompts',
    'cache',
    'http',
    'webhook',
    'auth',
    'runs',
  ] as const;
  const changed: string[] = keys.filter((key) => !isDeepStrictEqual(running[key], next[key]));
  if (running.sync.retryMinMs !== next.sync.retryMinMs || running.sync.retryMaxMs !== next.sync.retryMaxMs)
    changed.push('sync.retryMin', 'sync.retryMax');
  // skill_run's grants and the cache hints are set up once, from the sources the server started with.
  const before = new Map(running.sources.map((source) => [source.id, source]));
  if (next.sources.some((source) => !isDeepStrictEqual(before.get(source.id)?.run, source.run)))
    changed.push('sources[].run');
  // The hints as the policy builds them: a listing that turns private (a private source added to public ones)
  // waits as a scope that changes does.
  const was = cachePolicy(running.cache, running.sources);
  const now = cachePolicy(next.cache, next.sources);
  if (
    was.listed.cacheScope !== now.listed.cacheScope ||
    next.sources.some((source) => was.pinned(source.id).cacheScope !== now.pinned(source.id).cacheScope)
  )
    changed.push('sources[].cacheScope');
  return changed;
}

/**
 * SIGHUP re-reads the config: a valid one is applied to the sources in one catalog swap; one with problems is
 * logged, every problem, and the config running keeps serving.
 */
function reloadOnHangup(
  start: Config,
  worker: SyncWorker,
  logger: Logger,
  reread: () => Promise<Config>,
): { config: () => Config } {
  let running = start;
  const reload = async () => {
    let next: Config;
    try {
      next = await reread();
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [messageOf(error)];
      for (const problem of problems) logger.error({ file: start.file }, problem);
      logger.error(
        { file: start.file, problems: problems.length },
        'reload refused: the config has problems (above); the config running keeps serving',
      );
      return;
    }
    const waiting = settingsNeedingRestart(running, next);
    let done: Awaited<ReturnType<SyncWorker['reconfigure']>>;
    try {
      done = await worker.reconfigure(next);
    } catch (error) {
      logger.error(
        { file: start.file, err: messageOf(error) },
        'reload failed; the sources running keep serving',
      );
      return;
    }
    running = next;
    logger.info({ file: start.file, ...done }, 'config reloaded');
    if (waiting.length > 0)
      logger.warn({ settings: waiting }, 'these settings changed and apply at the next start, not on reload');
  };
  // One reload at a time, in the order the signals came; `reload` never rejects.
  let chain = Promise.resolve();
  process.on('SIGHUP', () => {
    chain = chain.then(reload);
  });
  return { config: () => running };
}

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
  io: { err: (text: string) => void; reread?: () => Promise<Config> },
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
  let membership: Membership;
  try {
    membership = joinDataDir(
      config,
      { command: 'serve', transport: http === undefined ? 'stdio' : 'http' },
      logger,
    );
  } catch (error) {
    if (!(error instanceof DataDirConflictError)) throw error;
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
    membership,
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
    run: runOptionsFor(config, logger),
    maxPrompts: config.maxPrompts,
    ...(metrics === undefined
      ? {}
      : { onRead: (source: string, bytes: number) => metrics.served(source, bytes) }),
  });
  const factory =
    metrics === undefined
      ? made
      : observeRequests(made, (method, outcome, seconds) => metrics.requested(method, outcome, seconds));
  const syncRemotes = () => void worker.syncAll('start', (source) => !isLocal(source));
  const reloading = reloadOnHangup(config, worker, logger, io.reread ?? (async () => config));

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
      sources: () => reloading.config().sources,
      status: () => worker.status(),
      pending: () => worker.pending(),
      ...(config.http.allowedHosts === undefined ? {} : { allowedHosts: config.http.allowedHosts }),
      ...(config.http.allowedOrigins === undefined ? {} : { allowedOrigins: config.http.allowedOrigins }),
      ...(metrics === undefined ? {} : { metrics }),
    });
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    io.err(`skillpin: ${error.message}\n`);
    membership.leave();
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
      auth: auth?.summary ?? null,
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
