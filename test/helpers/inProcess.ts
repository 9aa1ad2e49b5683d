import { createCatalog } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { startHttpServer } from '../../src/http/server.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/log.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';

/**
 * `skillpin serve --http 127.0.0.1:0` in this process: the wiring of src/commands/serve.ts, which gives no
 * handle to stop it.
 */
export async function serveHttpInProcess(
  configFile: string,
): Promise<{ url: string; sync(id: string): Promise<unknown>; close(): Promise<void> }> {
  const config = loadConfig(configFile);
  const catalog = createCatalog();
  const logger = silentLogger();
  const worker = createSyncWorker({ config, catalog, logger });
  await worker.restore();
  await worker.syncAll('start');
  const factory = createServerFactory({
    catalog,
    logger,
    cache: cachePolicy(config.cache, config.sources),
    pageSize: config.pageSize,
  });
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    factory,
    catalog,
    logger,
    worker,
    status: () => worker.status(),
    pending: () => worker.pending(),
  });
  return {
    url: server.url,
    sync: async (id) => worker.trigger(id, 'test'),
    close: async () => {
      await server.close();
      await worker.stop();
    },
  };
}
