#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { check } from './commands/check.ts';
import { serve } from './commands/serve.ts';
import { status } from './commands/status.ts';
import { sync } from './commands/sync.ts';
import { verify } from './commands/verify.ts';
import { ConfigError, loadConfig, parseDuration, type Config } from './config/index.ts';
import { createLogger } from './shared/log.ts';
import { SERVER_VERSION } from './mcp/server.ts';

export const EXIT_USAGE = 2;

function parseListen(value: string): { host: string; port: number } {
  const match =
    /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value) ?? /^()()(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65535)
    throw new InvalidArgumentError('expected <host>:<port>, for example 127.0.0.1:3917');
  return { host: match[1] || match[2] || '127.0.0.1', port };
}

function parseWait(value: string): number {
  try {
    return parseDuration(value);
  } catch {
    throw new InvalidArgumentError('expected a duration like 30s, 5m or 1h');
  }
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

const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);

export function program(): Command {
  const cli = new Command('skillpin')
    .description('Serve Agent Skills from git repositories, pinned to exact commits, over MCP')
    .version(SERVER_VERSION)
    .showHelpAfterError()
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE));
  const configOption = () => new Option('-c, --config <file>', 'configuration file').default('skillpin.yaml');

  cli
    .command('serve', { isDefault: true })
    .description('serve the configured sources (stdio by default)')
    .addOption(configOption())
    .option(
      '--http <host:port>',
      'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio',
      parseListen,
    )
    .action(async (options: { config: string; http?: { host: string; port: number } }) => {
      const code = await serve(readConfig(options.config), options.http, createLogger(), {
        err: write(process.stderr),
      });
      if (code !== undefined) process.exit(code);
    });

  cli
    .command('sync')
    .description(
      'sync every source once (fetch, index, record in dataDir) with progress on stderr; exit 1 if any source failed',
    )
    .addOption(configOption())
    .option(
      '--wait <duration>',
      'when another skillpin process holds dataDir, wait this long for it (30s, 5m) before giving up',
      parseWait,
      0,
    )
    .action(async (options: { config: string; wait: number }) => {
      const logger = createLogger(process.env['SKILLPIN_LOG_LEVEL'] ?? 'warn');
      process.exitCode = await sync(
        readConfig(options.config),
        { waitMs: options.wait, interactive: process.stderr.isTTY === true },
        logger,
        write(process.stderr),
      );
    });

  cli
    .command('check')
    .description(
      'index one commit exactly as the server would and report every skill and problem (exit 0 ok, 1 errors, 2 usage or I/O)',
    )
    .argument('[repository]', 'a local repository (work tree or bare) or an http(s) URL', '.')
    .addOption(new Option('--commit <sha>', 'the commit to check (full 40-hex SHA)').conflicts('ref'))
    .option('--ref <ref>', 'a branch, tag or HEAD to resolve (default HEAD)')
    .option('--paths <dir...>', 'only look for skills under these folders')
    .option('--json', 'print the report as JSON (documented in the README)')
    .option('--strict', 'warnings fail the check too')
    .option('--strict-names', 'refuse skills whose name differs from their folder')
    .option('--id <id>', 'the source id used in printed URIs (default: from the repository name)')
    .option('--token-env <name>', 'environment variable holding a token for a private remote')
    .action(
      async (
        repository: string,
        options: {
          commit?: string;
          ref?: string;
          paths?: string[];
          json?: boolean;
          strict?: boolean;
          strictNames?: boolean;
          id?: string;
          tokenEnv?: string;
        },
      ) => {
        process.exitCode = await check(
          { target: repository, ...options },
          { out: write(process.stdout), err: write(process.stderr) },
        );
      },
    );

  cli
    .command('verify')
    .description(
      'connect as a host would and verify every file of every listed skill (exit 0 ok, 1 failures, 2 cannot connect)',
    )
    .argument('[url]', 'a Streamable HTTP endpoint, e.g. http://127.0.0.1:3917/mcp')
    .option(
      '-c, --config <file>',
      'instead of a URL: start `skillpin serve` with this config over stdio and verify it',
    )
    .addOption(
      new Option('--era <era>', 'protocol era to speak')
        .choices(['auto', 'modern', 'legacy'])
        .default('auto'),
    )
    .option('--json', 'print the report as JSON')
    .action(
      async (
        url: string | undefined,
        options: { config?: string; era: 'auto' | 'modern' | 'legacy'; json?: boolean },
      ) => {
        const cliEntry = fileURLToPath(import.meta.url);
        process.exitCode = await verify({ ...(url === undefined ? {} : { url }), ...options }, cliEntry, {
          out: write(process.stdout),
          err: write(process.stderr),
        });
      },
    );

  cli
    .command('status')
    .description(
      'print each source with its served commit, last sync, last error and problems (from dataDir; no network)',
    )
    .addOption(configOption())
    .option('--json', 'print the status as JSON')
    .action(async (options: { config: string; json?: boolean }) =>
      status(readConfig(options.config), { json: options.json === true }, write(process.stdout)),
    );
  return cli;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  await program().parseAsync(process.argv);
}
