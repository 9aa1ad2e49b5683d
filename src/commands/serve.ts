import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import { startHttpServer } from '../http/server.ts';
import type { Logger } from '../log.ts';
import { createServerFactory } from '../mcp/server.ts';
import { loadAllSources } from '../sync/initial.ts';

/** `skillpin serve`: load every source, then serve MCP over stdio or Streamable HTTP until stopped. */
export async function serve(config: Config, http: { host: string; port: number } | undefined, logger: Logger): Promise<void> {
  const catalog = createCatalog(await loadAllSources(config, logger));
  const factory = createServerFactory({ catalog, logger, pageSize: config.pageSize, cache: config.cache, tools: config.tools, prompts: config.prompts });
  const skills = catalog.listed().reduce((sum, ns) => sum + ns.index.skills.length, 0);
  if (http === undefined) {
    serveStdio(factory, { onerror: (error) => logger.debug({ err: error.message }, 'stdio') });
    logger.info({ skills, sources: config.sources.length }, 'serving MCP over stdio');
    return;
  }
  const server = await startHttpServer({ ...http, factory, catalog, logger, ...config.http });
  logger.info({ url: server.url, skills, sources: config.sources.length }, `serving MCP over Streamable HTTP at ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
