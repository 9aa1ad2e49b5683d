import { isDeepStrictEqual } from 'node:util';
import type { Transport } from '@modelcontextprotocol/server';
import { createCatalog, type Catalog } from '../catalog/index.ts';
import { type Config, ConfigError, isLoopbackHost, type SourceConfig } from '../config/index.ts';
import { describeGitBackend } from '../git/index.ts';
import type { Metrics } from '../http/metrics.ts';
import { cachePolicy, type CachePolicy } from '../mcp/cache.ts';
import { observeRequests } from '../mcp/observe.ts';
import { createServerFactory, type ServerFactory } from '../mcp/server.ts';
import { createServingOwner, type ServingOwner } from '../mcp/serving.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import { joinDataDir, type Membership } from '../sync/dataDir/membership.ts';
import { DataDirConflictError } from '../sync/dataDir/processes.ts';
import { DataDirUnusableError } from '../sync/dataDir/unusable.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { createSyncWorker, type Reconfigured, START_SYNC, type SyncWorker } from '../sync/worker.ts';
import { type FirstAnswer, firstAnswer } from './firstAnswer.ts';

export { startFailureReport } from './startFailures.ts';
export { boundHeapGrowth } from '../shared/heapGrowth.ts';

/** Where and how `startServing` serves MCP, and the collaborators it is given. */
export interface ServeOptions {
  logger: Logger;
  /** Streamable HTTP at `http://host:port/mcp` (port 0: a free port); without it MCP goes over `transport`. */
  http?: { host: string; port: number };
  /** The transport of a stdio-style connection (default: this process's stdin and stdout). */
  transport?: Transport;
  /** Reads the config again for `reload()` (default: the config it started with). */
  reread?: () => Promise<Config>;
  /** Bind a non-loopback address without `auth:` (something in front decides who may call). */
  allowUnauthenticated?: boolean;
  /** The sync worker's clock: tests move polls instead of waiting for them. */
  clock?: Clock;
  /** Told after every sync of every source. */
  onSettled?: (outcome: SyncOutcome) => void;
}

/** What a reload did: the changes applied, or why nothing was. */
export type ReloadOutcome =
  | { applied: true; changes: Reconfigured; waiting: string[] }
  | { applied: false; problems: readonly string[] };

/** A running server: everything `startServing` started, and the one way to stop it. */
export interface Serving {
  /** The MCP endpoint over HTTP, as a client on this machine reaches it; `undefined` over a transport. */
  readonly url: string | undefined;
  readonly catalog: Catalog;
  /** What MCP serves over the catalog (snapshots, listings, search indexes). */
  readonly served: ServingOwner;
  /** The first sync of every source, local ones first; `[]` once closed before they ended. Never rejects. */
  readonly firstSyncs: Promise<readonly SyncOutcome[]>;
  /** Re-reads the config: a valid one is applied in one catalog swap; one with problems changes nothing. */
  reload(): Promise<ReloadOutcome>;
  /** Syncs one source now; `undefined` for an unknown id or once closed. */
  sync(source: string): Promise<SyncOutcome> | undefined;
  /** Stops everything it started (server, followers, timers, git processes) and leaves dataDir (its leases go). */
  close(): Promise<void>;
}

/** Serving cannot start: the message says why in one line, for the user; `exit` is the process's status. */
export class CannotServeError extends Error {
  constructor(
    message: string,
    readonly exit: ExitStatus,
  ) {
    super(message);
    this.name = 'CannotServeError';
  }
}

const isLocal = (source: SourceConfig) => source.location.kind === 'local';

/**
 * The local sources a stdio host's first listing waits for: those whose commit may have moved since dataDir
 * recorded it (a followed ref), or that dataDir did not restore. A pinned commit restored from dataDir is already
 * what its sync will serve: it syncs (store checked, state recorded) while the host connects.
 */
function movableLocal(catalog: Catalog): (source: SourceConfig) => boolean {
  const restored = new Map(catalog.state.sources.map((served) => [served.id, served.current.commit]));
  return (source) =>
    isLocal(source) && !(source.target.kind === 'commit' && restored.get(source.id) === source.target.commit);
}

/** Settings a running server took at its start: a reload that changes them says they wait for a restart. */
export function settingsNeedingRestart(running: Config, next: Config): string[] {
  const keys = [
    'dataDir',
    'lock',
    'pageSize',
    'tools',
    'prompts',
    'maxPrompts',
    'http',
    'webhook',
    'auth',
    'runs',
    'coordination',
  ] as const;
  const changed: string[] = keys.filter((key) => !isDeepStrictEqual(running[key], next[key]));
  if (running.sync.retryMinMs !== next.sync.retryMinMs || running.sync.retryMaxMs !== next.sync.retryMaxMs)
    changed.push('sync.retryMin', 'sync.retryMax');
  // skill_run's grants are set up once, from the sources the server started with.
  const before = new Map(running.sources.map((source) => [source.id, source]));
  if (next.sources.some((source) => !isDeepStrictEqual(before.get(source.id)?.run, source.run)))
    changed.push('sources[].run');
  return changed;
}

/** Why serve will not bind `host` without `auth:`: said once, before anything starts. */
export function unauthenticatedRefusal(host: string, port: number): string {
  return (
    `refusing to serve ${host}:${port} without authentication: ${host} is reachable from other machines, and ` +
    'anyone who reaches it could list and read every source, private ones included (Host and Origin checks ' +
    'stop browsers, not other clients). Configure auth: (static tokens or an OAuth issuer; see docs/http-and-auth.md), ' +
    'bind a loopback address such as 127.0.0.1, or pass --allow-unauthenticated when something in front of ' +
    'skillpin (a proxy, a private network) decides who may call it.'
  );
}

const skillsOf = (catalog: Catalog) => catalog.listed().reduce((sum, ns) => sum + ns.skills.length, 0);

/** The cache hints of the config running now: a reload that adds a private source makes the listing private. */
function liveCachePolicy(config: () => Config): CachePolicy {
  let of: Config | undefined;
  let policy: CachePolicy = cachePolicy();
  const now = () => {
    const running = config();
    if (running !== of)
      [of, policy] = [running, cachePolicy(running.cache, running.sources, running.auth !== undefined)];
    return policy;
  };
  return {
    get listed() {
      return now().listed;
    },
    pinned: (source) => now().pinned(source),
  };
}

/** The config running, and `reload()`: one at a time, in the order asked; a bad config changes nothing. */
function reloader(start: Config, worker: SyncWorker, logger: Logger, reread: () => Promise<Config>) {
  let running = start;
  const reload = async (): Promise<ReloadOutcome> => {
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
      return { applied: false, problems };
    }
    const waiting = settingsNeedingRestart(running, next);
    let changes: Reconfigured;
    try {
      changes = await worker.reconfigure(next);
    } catch (error) {
      logger.error(
        { file: start.file, err: messageOf(error) },
        'reload failed; the sources running keep serving',
      );
      return { applied: false, problems: [messageOf(error)] };
    }
    running = next;
    logger.info({ file: start.file, ...changes }, 'config reloaded');
    if (waiting.length > 0)
      logger.warn({ settings: waiting }, 'these settings changed and apply at the next start, not on reload');
    return { applied: true, changes, waiting };
  };
  let chain: Promise<unknown> = Promise.resolve();
  return {
    config: () => running,
    reload: (): Promise<ReloadOutcome> => {
      const done = chain.then(reload);
      chain = done;
      return done;
    },
  };
}

/** The parts every transport shares: catalog, worker (restored from dataDir), metrics and the server factory. */
async function startCore(
  config: Config,
  options: ServeOptions,
  membership: Membership,
  later: Promise<void> | undefined,
) {
  const { logger } = options;
  const catalog = createCatalog();
  // What MCP serves over the catalog, shared by every server, warming, the status page and metrics.
  const served = createServingOwner(catalog, { pageSize: config.pageSize });
  // Metrics are served over HTTP only, and only when asked for; prom-client loads only then.
  const metrics: Metrics | undefined =
    options.http !== undefined && config.http.metrics
      ? (await import('../http/metrics.ts')).createMetrics({
          catalog,
          searchStats: served.searchStats,
          status: () => worker.status(),
        })
      : undefined;
  const worker = createSyncWorker({
    config,
    catalog,
    logger,
    membership,
    coordination: await coordinationOf(config, options, membership),
    clock: options.clock,
    onSettled: options.onSettled,
    onSynced: metrics && ((outcome, seconds) => metrics.synced(outcome, seconds)),
  });
  // Each listed namespace is made ready (its snapshot, its search index read from dataDir or built yielding the
  // thread) as soon as it is published (over stdio, once the host has its first answer), and the full listing once
  // every source's first sync is done; readiness waits for them.
  const warming = (await import('../mcp/warm.ts')).warmCatalog(
    catalog,
    served,
    () => worker.pending().length === 0,
    later,
  );
  await worker.restore();
  const reloading = reloader(config, worker, logger, options.reread ?? (async () => config));
  const grants = config.sources.some((source) => source.run !== undefined);
  const made = createServerFactory({
    catalog,
    serving: served,
    logger,
    pageSize: config.pageSize,
    cache: liveCachePolicy(reloading.config),
    tools: config.tools,
    prompts: config.prompts,
    run: grants ? (await import('../run/setup.ts')).runOptionsFor(config, logger) : undefined,
    maxPrompts: config.maxPrompts,
    onRead: metrics && ((source, bytes) => metrics.served(source, bytes)),
  });
  const factory: ServerFactory =
    metrics === undefined
      ? made
      : observeRequests(made, (method, outcome, seconds) => metrics.requested(method, outcome, seconds));
  return { catalog, served, metrics, worker, reloading, factory, warming };
}

type Core = Awaited<ReturnType<typeof startCore>>;

/**
 * Redis coordination of HTTP replicas (`coordination:`), loaded only then: it waits for Redis up to its connect
 * timeout, and goes on alone (reconnecting behind) when Redis does not answer. A stdio server follows on its own.
 */
async function coordinationOf(config: Config, options: ServeOptions, membership: Membership) {
  if (config.coordination === undefined || options.http === undefined) return undefined;
  const { connectRedisCoordination } = await import('../sync/coordination/connect.ts');
  return connectRedisCoordination({
    config: config.coordination,
    replica: membership.holder,
    logger: options.logger,
    clock: options.clock ?? systemClock,
  });
}

/** An open endpoint: where it is, what the start line says of it, and how it closes. */
interface Endpoint {
  url: string | undefined;
  /** The start line, once the git backend is known. */
  started: { message: (git: string) => string; fields: Record<string, unknown> };
  close(): Promise<void>;
}

/** MCP over one stdio-style connection. stdio is the local user's own process: auth: applies to HTTP only. */
async function serveTransport(
  core: Core,
  options: ServeOptions,
  stdio: Promise<typeof import('@modelcontextprotocol/server/stdio')>,
  first: FirstAnswer,
): Promise<Endpoint> {
  const { serveStdio } = await stdio;
  const handle = serveStdio(first.observe(core.factory), {
    transport: options.transport,
    onerror: (error) => options.logger.debug({ err: error.message }, 'stdio'),
  });
  return {
    url: undefined,
    started: { message: (git) => `serving MCP over stdio (git backend: ${git})`, fields: {} },
    close: () => handle.close(),
  };
}

/** MCP, the status page, probes, metrics and webhooks over Streamable HTTP. */
async function serveHttp(
  core: Core,
  config: Config,
  listen: { host: string; port: number },
  options: ServeOptions,
): Promise<Endpoint> {
  const { logger } = options;
  const [{ ListenError, MCP_PATH, startHttpServer }, gate] = await Promise.all([
    import('../http/server.ts'),
    config.auth === undefined ? undefined : import('../http/auth/gate.ts'),
  ]);
  const auth = config.auth && gate?.createAuthGate(config.auth, { logger, mcpPath: MCP_PATH });
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    server = await startHttpServer({
      listen: {
        ...listen,
        allowedHosts: config.http.allowedHosts,
        allowedOrigins: config.http.allowedOrigins,
      },
      serving: {
        factory: core.factory,
        catalog: core.catalog,
        served: core.served,
        status: () => core.worker.status(),
        pending: () => [...new Set([...core.worker.pending(), ...core.warming.pending()])],
        metrics: core.metrics,
      },
      webhooks: config.webhook && {
        ...config.webhook,
        sources: () => core.reloading.config().sources,
        worker: core.worker,
      },
      auth,
      logger,
    });
  } catch (error) {
    if (error instanceof ListenError) throw new CannotServeError(error.message, EXIT.unavailable);
    throw error;
  }
  const page = new URL('/', server.url).href;
  // A wildcard bind is named by loopback; other machines use this host's name (allowed in http.allowedHosts).
  const everywhere = new URL(server.url).host === server.listening ? '' : ', on every interface';
  return {
    url: server.url,
    started: {
      message: (git) =>
        `serving MCP over Streamable HTTP at ${server.url}${everywhere} (status page ${page}; git backend: ${git})`,
      fields: { url: server.url, listening: server.listening, auth: auth?.summary ?? null },
    },
    close: () => server.close(),
  };
}

/** Refuses a non-loopback bind without `auth:` unless told otherwise explicitly. */
function checkExposure(config: Config, options: ServeOptions): void {
  const { http } = options;
  if (http === undefined || config.auth !== undefined || isLoopbackHost(http.host)) return;
  if (options.allowUnauthenticated !== true)
    throw new CannotServeError(unauthenticatedRefusal(http.host, http.port), EXIT.usage);
  options.logger.warn(
    { host: http.host },
    'serving without authentication on a non-loopback address (--allow-unauthenticated)',
  );
}

/**
 * Joins the processes on dataDir; a source another process defines otherwise is refused, naming both configs, and a
 * dataDir that cannot be created or written is refused naming where it was set.
 */
function joinAsServer(config: Config, options: ServeOptions): Membership {
  try {
    const transport = options.http === undefined ? 'stdio' : 'http';
    return joinDataDir(config, { command: 'serve', transport }, options.logger, options.clock);
  } catch (error) {
    if (error instanceof DataDirConflictError) throw new CannotServeError(error.message, EXIT.config);
    if (error instanceof DataDirUnusableError) throw new CannotServeError(error.message, EXIT.cannotCreate);
    throw error;
  }
}

/**
 * Serves what dataDir holds at once. Over HTTP, local sources (no network) sync before this resolves; over stdio,
 * a local source that may have moved syncs before the connection opens and the others once the host has its first
 * answer. Remote sources sync after those and join as each lands (list_changed), so a slow remote never holds the
 * others.
 * Throws CannotServeError when it cannot start (exposure without auth, a source another process on dataDir
 * defines otherwise, a dataDir that cannot be created or written, the port taken).
 */
export async function startServing(config: Config, options: ServeOptions): Promise<Serving> {
  checkExposure(config, options);
  const membership = joinAsServer(config, options);
  // Over stdio, what can wait waits for the host's first answer (commands/firstAnswer.ts); over HTTP nothing does.
  const answer = options.http === undefined ? firstAnswer() : undefined;
  const closing = { now: false };
  let core: Core | undefined;
  let endpoint: Endpoint | undefined;
  try {
    // Over HTTP `git --version` runs while the core loads and restores (its repositories wait for the same answer);
    // over stdio the stdio transport's module loads meanwhile.
    const probed = answer === undefined ? describeGitBackend(config.git) : undefined;
    const stdio = answer === undefined ? undefined : import('@modelcontextprotocol/server/stdio');
    stdio?.catch(() => undefined);
    core = await startCore(config, options, membership, answer?.answered);
    // Over HTTP the port opens first (probes answer while local sources sync); a stdio host lists as soon as it
    // connects, so a local source that may have moved is in the catalog before the connection opens.
    const moved = answer === undefined ? () => false : movableLocal(core.catalog);
    const early: SyncOutcome[] = [];
    const opened =
      answer === undefined
        ? await serveHttp(core, config, options.http!, options)
        : await core.worker
            .syncAll(START_SYNC, moved)
            .then((outcomes) => early.push(...outcomes))
            .then(() => serveTransport(core!, options, stdio!, answer));
    endpoint = opened;
    const started = core;
    // The other local sources (over stdio: restored commits, their stores checked) sync once the host has its first
    // answer; the start line, which names the git backend, follows them.
    const local = (async () => {
      await answer?.answered;
      if (closing.now) return;
      early.push(
        ...(await started.worker.syncAll(START_SYNC, (source) => isLocal(source) && !moved(source))),
      );
      const git = await (probed ?? describeGitBackend(config.git));
      if (closing.now) return;
      options.logger.info(
        { ...opened.started.fields, skills: skillsOf(started.catalog), sources: config.sources.length, git },
        opened.started.message(`${git.backend}, ${git.reason}`),
      );
    })();
    // Over HTTP every local source has synced when this resolves.
    if (answer === undefined) await local;
    const remote = local.then(() => started.worker.syncAll(START_SYNC, (source) => !isLocal(source)));
    const firstSyncs = remote.then((outcomes) => [...early, ...outcomes]);
    return handleOf(core, opened, options.logger, firstSyncs, () => {
      closing.now = true;
      answer?.release();
    });
  } catch (error) {
    await endpoint?.close();
    // Stopping the worker leaves dataDir; without one, this process leaves it here.
    if (core === undefined) membership.leave();
    else await core.worker.stop();
    throw error;
  }
}

function handleOf(
  core: Core,
  endpoint: Endpoint,
  logger: Logger,
  firstSyncs: Promise<SyncOutcome[]>,
  onClose: () => void,
): Serving {
  let closing: Promise<void> | undefined;
  return {
    url: endpoint.url,
    catalog: core.catalog,
    served: core.served,
    firstSyncs: firstSyncs.then((outcomes) => (closing === undefined ? outcomes : [])),
    reload: () => core.reloading.reload(),
    sync: (source) => (closing === undefined ? core.worker.trigger(source, 'asked') : undefined),
    close: () => {
      // Running syncs end with their git processes: one cut short is redone at the next start.
      closing ??= (async () => {
        onClose();
        await endpoint.close();
        core.warming.stop();
        await core.worker.stop();
        logger.info('stopped');
        logger.flush();
      })();
      return closing;
    },
  };
}
