import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import { startHttpServer } from '../http/server.ts';
import type { Logger } from '../shared/log.ts';
import { createServerFactory } from '../mcp/server.ts';
import { createSyncWorker } from '../sync/worker.ts';

/** `skillpin serve`: serve what dataDir holds at once, sync every source, then serve MCP until stopped. */
export async function serve(
  config: Config,
  http: { host: string; port: number } | undefined,
  logger: Logger,
): Promise<void> {
  const catalog = createCatalog();
  const worker = createSyncWorker({ config, catalog, logger });
  await worker.start();
  const factory = createServerFactory({
    catalog,
    logger,
    pageSize: config.pageSize,
    cache: config.cache,
    tools: config.tools,
    prompts: config.prompts,
  });
  const skills = catalog.listed().reduce((sum, ns) => sum + ns.skills.length, 0);
  if (http === undefined) {
    serveStdio(factory, { onerror: (error) => logger.debug({ err: error.message }, 'stdio') });
    logger.info({ skills, sources: config.sources.length }, 'serving MCP over stdio');
    return;
  }
  const server = await startHttpServer({
    ...http,
    factory,
    catalog,
    logger,
    worker,
    ...(config.webhook === undefined ? {} : { webhook: config.webhook }),
    sources: config.sources,
    ...config.http,
  });
  logger.info(
    { url: server.url, skills, sources: config.sources.length },
    `serving MCP over Streamable HTTP at ${server.url}`,
  );
  const stop = () => void Promise.all([server.close(), worker.stop()]).then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
