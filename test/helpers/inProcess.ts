import { createCatalog, type Catalog } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createAuthGate } from '../../src/http/auth/gate.ts';
import { MCP_PATH, startHttpServer } from '../../src/http/server.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { type Logger, silentLogger } from '../../src/shared/log.ts';
import type { Clock } from '../../src/sync/clock.ts';
import { createSyncWorker, type SyncOutcome } from '../../src/sync/worker.ts';

export interface InProcessOptions {
  /** Another dataDir than the config's: replicas share a config, not a dataDir. */
  dataDir?: string;
  /** The sync worker's clock: tests move polls instead of waiting for them. */
  clock?: Clock;
  logger?: Logger;
  /** Told after every sync of every source. */
  onSettled?: (outcome: SyncOutcome) => void;
}

/**
 * `skillpin serve --http 127.0.0.1:0` in this process: the wiring of src/commands/serve.ts (auth, webhook, status
 * and readiness from the config), which gives no handle to stop it.
 */
export async function serveHttpInProcess(
  configFile: string,
  options: InProcessOptions = {},
): Promise<{ url: string; catalog: Catalog; sync(id: string): Promise<unknown>; close(): Promise<void> }> {
  const loaded = loadConfig(configFile);
  const config = options.dataDir === undefined ? loaded : { ...loaded, dataDir: options.dataDir };
  const catalog = createCatalog();
  const logger = options.logger ?? silentLogger();
  const worker = createSyncWorker({
    config,
    catalog,
    logger,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onSettled === undefined ? {} : { onSettled: options.onSettled }),
  });
  await worker.restore();
  await worker.syncAll('start');
  const factory = createServerFactory({
    catalog,
    logger,
    cache: cachePolicy(config.cache, config.sources),
    pageSize: config.pageSize,
    tools: config.tools,
    prompts: config.prompts,
  });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    factory,
    catalog,
    logger,
    worker,
    ...(config.webhook === undefined ? {} : { webhook: config.webhook }),
    ...(config.auth === undefined
      ? {}
      : { auth: createAuthGate(config.auth, { logger, mcpPath: MCP_PATH }) }),
    sources: config.sources,
    status: () => worker.status(),
    pending: () => worker.pending(),
    ...(config.http.allowedHosts === undefined ? {} : { allowedHosts: config.http.allowedHosts }),
    ...(config.http.allowedOrigins === undefined ? {} : { allowedOrigins: config.http.allowedOrigins }),
  });
  return {
    url: server.url,
    catalog,
    sync: async (id) => worker.trigger(id, 'test'),
    close: async () => {
      await server.close();
      await worker.stop();
    },
  };
}
