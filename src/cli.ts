#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createCatalog } from './catalog/index.ts';
import { ConfigError, loadConfig, type Config } from './config/index.ts';
import { startHttpServer } from './http/server.ts';
import { createLogger, type Logger } from './log.ts';
import { createServerFactory, SERVER_VERSION } from './mcp/server.ts';
import { loadAllSources } from './sync/initial.ts';

export const EXIT_USAGE = 2;

function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value) ?? /^()()(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65535) throw new InvalidArgumentError('expected <host>:<port>, for example 127.0.0.1:3917');
  return { host: match[1] || match[2] || '127.0.0.1', port };
}

function readConfig(file: string): Config {
  try {
    return loadConfig(file);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`skillpin: ${error.message}\n`);
      process.exit(EXIT_USAGE);
    }
    throw error;
  }
}

async function serve(options: { config: string; http?: { host: string; port: number } }, logger: Logger): Promise<void> {
  const config = readConfig(options.config);
  const catalog = createCatalog(await loadAllSources(config, logger));
  const factory = createServerFactory({ catalog, logger, pageSize: config.pageSize, cache: config.cache });
  const skills = catalog.listed().reduce((sum, ns) => sum + ns.index.skills.length, 0);
  if (options.http === undefined) {
    serveStdio(factory, { onerror: (error) => logger.debug({ err: error.message }, 'stdio') });
    logger.info({ skills, sources: config.sources.length }, 'serving MCP over stdio');
    return;
  }
  const server = await startHttpServer({ ...options.http, factory, catalog, logger, ...config.http });
  logger.info({ url: server.url, skills, sources: config.sources.length }, `serving MCP over Streamable HTTP at ${server.url}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export function program(): Command {
  const cli = new Command('skillpin')
    .description('Serve Agent Skills from git repositories, pinned to exact commits, over MCP')
    .version(SERVER_VERSION)
    .showHelpAfterError()
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE));
  cli
    .command('serve', { isDefault: true })
    .description('serve the configured sources (stdio by default)')
    .option('-c, --config <file>', 'configuration file', 'skillpin.yaml')
    .option('--http <host:port>', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio', parseListen)
    .action(async (options: { config: string; http?: { host: string; port: number } }) => serve(options, createLogger()));
  return cli;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  await program().parseAsync(process.argv);
}
