// Only what every command needs loads here; a command's module, and the libraries only it uses, load when it runs.
import { existsSync, realpathSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CheckOptions } from './commands/check.ts';
import type { DiffOptions } from './commands/diff.ts';
import type { Serving } from './commands/serve.ts';
import type { DiffFormat } from './commands/update.ts';
import { parseDuration } from './config/duration.ts';
import { ConfigError } from './config/error.ts';
import { EXIT, EXIT_CODES } from './shared/exitCodes.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type Logger, type LogLevel } from './shared/log.ts';
import { closest } from './shared/text.ts';
import { SERVER_VERSION } from './shared/version.ts';

/** How long a shutdown may take before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * The process's side of serving: SIGHUP reloads; SIGINT, SIGTERM and (over stdio) the client closing stdin stop
 * everything, then exit. A sync cut short is redone at the next start.
 */
function bindProcess(serving: Serving, logger: Logger, stdio: boolean): void {
  // reload() applies one at a time, in the order asked, and never rejects.
  process.on('SIGHUP', () => void serving.reload());
  const shutdown = (why: string) => () => {
    logger.info({ why }, 'shutting down');
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    void serving.close().finally(() => process.exit(0));
  };
  if (stdio) process.stdin.once('end', shutdown('stdin closed'));
  process.once('SIGINT', shutdown('SIGINT'));
  process.once('SIGTERM', shutdown('SIGTERM'));
}

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

/** The signature options of `check` and `diff`, as a source's `verify:` takes them. */
const verifyOptions = {
  ssh: () =>
    new Option(
      '--ssh-allowed-signers <file>',
      "verify SSH signatures against this file (git's allowed signers)",
    ),
  gpg: () => new Option('--gpg-key <file...>', 'verify OpenPGP signatures against these armored public keys'),
  require: () =>
    new Option(
      '--require-signed <what>',
      'what must be signed: the commit, or an annotated tag the ref names',
    ).choices(['commit', 'tag']),
};

/** Where the commands write; tests pass their own to run the CLI in-process. */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** `err` is a terminal: progress rewrites one line. */
  interactive: boolean;
}

const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
const processIo: CliIo = {
  out: write(process.stdout),
  err: write(process.stderr),
  interactive: process.stderr.isTTY === true,
};

/**
 * The logger of a command that logs: the global `--log-level` (or SKILLPIN_LOG_LEVEL) and `--log-format`. The
 * logger's module (and pino with it) loads here, with the first command that logs.
 */
async function loggerOf(command: Command, level: LogLevel) {
  const options = command.optsWithGlobals<{ logLevel?: LogLevel; logFormat?: LogFormat }>();
  const { createLogger } = await import('./shared/logger.ts');
  return createLogger({ level: options.logLevel ?? level, format: options.logFormat });
}

/** The config file, validated: the config module (yaml, zod) loads only for a command that reads one. */
const loadConfig = async (file: string) => (await import('./config/index.ts')).loadConfig(file);

/** What `serve` and `sync` follow: the config's sources, or exactly the lockfile's commits under `--locked`. */
async function servedConfig(file: string, locked: boolean) {
  const { servedConfig } = await import('./pins/pinning.ts');
  return servedConfig(await loadConfig(file), locked);
}

/** The config, with its signature keys read (lock and update resolve refs that may need verifying). */
async function keyedConfig(file: string) {
  const { checkKeys } = await import('./pins/pinning.ts');
  return checkKeys(await loadConfig(file));
}

/** What every command's wiring gets: where it writes, and where its exit status goes. */
interface Wiring {
  io: CliIo;
  exit: (code: number) => void;
}

const configOption = () => new Option('-c, --config <file>', 'configuration file').default('skillpin.yaml');

/** `serve` (the default command): starts serving, then only cli.ts binds the process. */
function serveCommand(cli: Command, { io, exit }: Wiring): void {
  const serving = cli
    .command('serve', { isDefault: true })
    .description(
      'serve the configured sources (stdio by default); SIGHUP or `skillpin reload` re-reads the config',
    )
    .addOption(configOption())
    .option(
      '--http <host:port>',
      'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio',
      parseListen,
    )
    .option('--locked', 'serve exactly the commits of the lockfile (skillpin.lock next to the config)')
    .option(
      '--allow-unauthenticated',
      'serve --http on a non-loopback address without auth: (something in front decides who may call)',
    );
  serving.action(
    async (
      options: {
        config: string;
        http?: { host: string; port: number };
        locked?: boolean;
        allowUnauthenticated?: boolean;
      },
      command: Command,
    ) => {
      // `skillpin` alone where there is no config: say how to get one, not "cannot be read".
      if (serving.getOptionValueSource('config') === 'default' && !existsSync(options.config)) {
        io.err(NO_CONFIG_HELP);
        exit(EXIT.config);
        return;
      }
      const locked = options.locked === true;
      const reread = async () => servedConfig(options.config, locked);
      // Serving's modules load while the config is read (a config error leaves them unused).
      const loading = import('./commands/serve.ts');
      loading.catch(() => undefined);
      const config = await reread();
      const logger = await loggerOf(command, 'info');
      const { boundHeapGrowth, CannotServeError, startFailureReport, startServing } = await loading;
      // Serving only: the other commands keep V8's own heap growth (shared/heapGrowth.ts).
      boundHeapGrowth();
      try {
        const serving = await startServing(config, {
          logger,
          http: options.http,
          reread,
          allowUnauthenticated: options.allowUnauthenticated === true,
        });
        bindProcess(serving, logger, options.http === undefined);
        // No source synced at start: said in plain words on stderr, whatever the log format.
        void serving.firstSyncs.then((outcomes) => {
          const report = startFailureReport(outcomes);
          if (report !== undefined) io.err(report);
        });
      } catch (error) {
        if (!(error instanceof CannotServeError)) throw error;
        io.err(`skillpin: ${error.message}\n`);
        exit(error.exit);
      }
    },
  );
}

/** `sync`: every source once, with progress on stderr. */
function syncCommand(cli: Command, { io, exit }: Wiring): void {
  cli
    .command('sync')
    .description(
      'sync every source once (fetch, index, record in dataDir) with progress on stderr (exit 0 ok, 2 a source failed, 73 dataDir cannot be created or written, 75 another process did not sync one in time)',
    )
    .addOption(configOption())
    .option(
      '--wait <duration>',
      "when another skillpin process leases a source, wait this long for its sync (30s, 5m; default: the source's deadline)",
      parseWait,
    )
    .option('--locked', 'sync exactly the commits of the lockfile')
    .action(async (options: { config: string; wait?: number; locked?: boolean }, command: Command) => {
      const logger = await loggerOf(command, 'warn');
      const { sync } = await import('./commands/sync.ts');
      exit(
        await sync(
          await servedConfig(options.config, options.locked === true),
          { waitMs: options.wait, interactive: io.interactive },
          logger,
          io.err,
        ),
      );
    });
}

/** `check`: one commit (or the work tree) indexed exactly as the server would. */
function checkCommand(cli: Command, { io, exit }: Wiring): void {
  cli
    .command('check')
    .description(
      'index one commit exactly as the server would and report every skill and problem (exit 0 ok, 1 errors or a refused signature, 2 the repository cannot be read)',
    )
    .argument(
      '[repository]',
      'a local repository (work tree or bare), an http(s) URL, or github:owner/repo / gitlab:group/project',
      '.',
    )
    .addOption(
      new Option('--commit <sha>', 'the commit to check (short ids in a local repository)').conflicts('ref'),
    )
    .option('--ref <ref>', 'a branch, tag or HEAD to resolve (default HEAD)')
    .option('--paths <dir...>', 'only look for skills under these folders')
    .option('--json', 'print the report as JSON (documented in docs/checking.md); the same as --format json')
    .addOption(
      new Option(
        '--format <format>',
        'text, json, or github: workflow annotations a pull request shows on the file and line',
      ).choices(['text', 'json', 'github']),
    )
    .option('--problems-only', 'print only the problems, not the skills')
    .option(
      '--worktree',
      'check the work tree as `git add -A` would stage it (a temporary index; yours and HEAD untouched); the default in a work tree with changes',
    )
    .option('--no-worktree', 'check HEAD, not the work tree with its changes')
    .option(
      '--fix',
      "print a patch (unified diff, for git apply) of the smallest frontmatter change making each skill refused for its name or description servable: the name its folder implies, a description cut at a sentence; what it makes servable goes to stderr; exit status is the check's",
    )
    .option('--write', 'with --fix: edit the SKILL.md files in place and print what it made servable')
    .option('--strict', 'warnings fail the check too')
    .option('--strict-names', 'refuse skills whose name differs from their folder')
    .option('--id <id>', 'the source id used in printed URIs (default: from the repository name)')
    .option('--token-env <name>', 'environment variable holding a token for a private remote')
    .addOption(verifyOptions.ssh())
    .addOption(verifyOptions.gpg())
    .addOption(verifyOptions.require())
    .action(async (repository: string, options: Omit<CheckOptions, 'target'>) => {
      const { check } = await import('./commands/check.ts');
      exit(await check({ target: repository, ...options }, io));
    });
}

/** `--json` or `--markdown`, for `update` and `diff`. */
const formats = () => [
  new Option('--json', 'print JSON (documented in docs/following-and-pins.md)').conflicts('markdown'),
  new Option('--markdown', 'print Markdown, for a pull request'),
];
const formatOf = (options: { json?: boolean; markdown?: boolean }): DiffFormat =>
  options.json ? 'json' : options.markdown ? 'markdown' : 'text';

/** `lock` and `update`: the lockfile written, and refs re-resolved into it. */
function pinCommands(cli: Command, { io, exit }: Wiring): void {
  cli
    .command('lock')
    .description(
      'resolve every source and write the lockfile (skillpin.lock next to the config, or lock:) (exit 0 written, 2 a source failed)',
    )
    .addOption(configOption())
    .action(async (options: { config: string }) => {
      const { lock } = await import('./commands/lock.ts');
      exit(await lock(await keyedConfig(options.config), io));
    });

  const updating = cli
    .command('update')
    .description(
      're-resolve refs, rewrite the lockfile and print what changed (exit 0 unchanged, 1 changed, 2 a source failed)',
    )
    .argument('[source...]', 'the sources to update (default: all)')
    .addOption(configOption());
  for (const option of formats()) updating.addOption(option);
  updating.action(
    async (names: string[], options: { config: string; json?: boolean; markdown?: boolean }) => {
      const { update } = await import('./commands/update.ts');
      exit(await update(await keyedConfig(options.config), names, formatOf(options), io));
    },
  );
}

/** `diff`: the skills added, removed and changed between two commits. */
function diffCommand(cli: Command, { io, exit }: Wiring): void {
  const diffing = cli
    .command('diff')
    .description(
      'the skills added, removed and changed between two commits of a repository (exit 0 the same, 1 they differ, 2 an end cannot be read)',
    )
    .argument(
      '<repository>',
      'a local repository, an http(s) URL, or github:owner/repo / gitlab:group/project',
    )
    .argument(
      '<from>',
      'a commit, branch, tag or HEAD; in a local repository also a short commit id or any revision git rev-parse accepts (HEAD~1, v1.2^{commit})',
    )
    .argument('<to>', 'the same as <from>')
    .option('--paths <dir...>', 'only look for skills under these folders')
    .option('--strict-names', 'refuse skills whose name differs from their folder')
    .option('--token-env <name>', 'environment variable holding a token for a private remote')
    .option(
      '-c, --config <file>',
      "<repository> is a source of this config (its settings apply), and <from> and <to> refs of it by name (a refs: source's v1.0.0 v2.0.0)",
    )
    .addOption(verifyOptions.ssh())
    .addOption(verifyOptions.gpg())
    .addOption(verifyOptions.require());
  for (const option of formats()) diffing.addOption(option);
  diffing.action(
    async (
      repository: string,
      from: string,
      to: string,
      options: Omit<DiffOptions, 'repository' | 'from' | 'to' | 'format' | 'config'> & {
        json?: boolean;
        markdown?: boolean;
        config?: string;
      },
    ) => {
      const { json: _json, markdown: _markdown, config: file, ...rest } = options;
      const { diff } = await import('./commands/diff.ts');
      const config = file === undefined ? undefined : await keyedConfig(file);
      exit(await diff({ repository, from, to, ...rest, config, format: formatOf(options) }, io));
    },
  );
}

/** `verify`: connect as a host would and check every file's digest. */
function verifyCommand(cli: Command, { io, exit }: Wiring): void {
  cli
    .command('verify')
    .description(
      'connect as a host would and verify every file of every listed skill (exit 0 ok, 1 failures, 69 cannot connect)',
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
    .option('--token-env <name>', 'environment variable holding a bearer token, for a server with auth:')
    .action(
      async (
        url: string | undefined,
        options: { config?: string; era: 'auto' | 'modern' | 'legacy'; json?: boolean; tokenEnv?: string },
      ) => {
        const cliEntry = fileURLToPath(import.meta.url);
        const { verify } = await import('./commands/verify.ts');
        exit(await verify({ url, ...options }, cliEntry, io));
      },
    );
}

/** `init`, `reload` and `status`: a starter config, a running server told to re-read, what dataDir holds. */
function setupCommands(cli: Command, { io, exit }: Wiring): void {
  cli
    .command('init')
    .description('write a commented starter config that runs as written: a public source and this repository')
    .argument('[file]', 'where to write it', 'skillpin.yaml')
    .option('--force', 'replace an existing file')
    .action(async (file: string, options: { force?: boolean }) => {
      const { init } = await import('./commands/init.ts');
      exit(await init(file, options, io));
    });

  cli
    .command('reload')
    .description(
      "make the skillpin serve holding the config's dataDir re-read its config (SIGHUP); an invalid config is refused here",
    )
    .addOption(configOption())
    .action(async (options: { config: string }) => {
      const { reload } = await import('./commands/reload.ts');
      exit(reload(await loadConfig(options.config), io));
    });

  cli
    .command('status')
    .description(
      'print each source with its served commit, last sync, last error and problems (from dataDir); with coordination:, what each replica serves (read from Redis)',
    )
    .addOption(configOption())
    .option('--json', 'print the status as JSON')
    .action(async (options: { config: string; json?: boolean }) => {
      const { status } = await import('./commands/status.ts');
      await status(await loadConfig(options.config), { json: options.json === true }, io.out);
    });
}

/** The CLI; a command's exit status goes to `exit`, a usage error is thrown as a CommanderError. */
export function program(
  io: CliIo = processIo,
  exit: (code: number) => void = (code) => {
    process.exitCode = code;
  },
): Command {
  const cli = new Command('skillpin')
    .description('Serve Agent Skills from git repositories, pinned to exact commits, over MCP')
    .version(SERVER_VERSION)
    .showHelpAfterError()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride()
    .addHelpText('after', EXIT_HELP)
    .addOption(
      new Option('--log-level <level>', 'what is logged on stderr (default: info; sync: warn)')
        .choices(LOG_LEVELS)
        .env('SKILLPIN_LOG_LEVEL'),
    )
    .addOption(
      new Option('--log-format <format>', 'log lines: pretty (default on a terminal) or json').choices(
        LOG_FORMATS,
      ),
    );
  const wiring = { io, exit };
  for (const add of [
    serveCommand,
    syncCommand,
    checkCommand,
    pinCommands,
    diffCommand,
    verifyCommand,
    setupCommands,
  ])
    add(cli, wiring);
  return cli;
}

/** The exit statuses, after `skillpin --help`: from the one table (docs/exit-codes.md says more). */
const EXIT_HELP = `\nExit status: ${Object.entries(EXIT_CODES)
  .map(([name, { status }]) => `${status} ${name}`)
  .join(', ')} (docs/exit-codes.md)`;

const NO_CONFIG_HELP = `skillpin: no skillpin.yaml in this folder. To start:
  skillpin init                                write a commented starter skillpin.yaml here
  skillpin serve --config <file>               serve a config's sources (stdio; --http 127.0.0.1:3917 for HTTP)
  npm start                                    in a checkout of skillpin: serve the bundled example catalog
  skillpin --help                              every command
`;

/** A first word that names no command is a typo, not an argument of the default command. */
function unknownCommand(cli: Command, args: readonly string[]): string | undefined {
  const first = args[0];
  if (first === undefined || first.startsWith('-') || first === 'help') return undefined;
  const names = cli.commands.map((command) => command.name());
  if (names.includes(first)) return undefined;
  const guess = closest(first, names);
  return `skillpin: unknown command ${JSON.stringify(first)}${guess === undefined ? '' : `; did you mean ${guess}?`} (commands: ${names.join(', ')}; skillpin --help)\n`;
}

/** Runs the CLI on `args` (what follows the script) and resolves to its exit status; `serve` resolves once serving. */
export async function run(args: readonly string[], io: CliIo = processIo): Promise<number> {
  let status = 0;
  try {
    const cli = program(io, (code) => {
      status = code;
    });
    const unknown = unknownCommand(cli, args);
    if (unknown !== undefined) {
      io.err(unknown);
      return EXIT.usage;
    }
    await cli.parseAsync(args, { from: 'user' });
    return status;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) io.err(`skillpin: ${problem}\n`);
    return EXIT.config;
  }
}

/** The process's CLI (`bin/skillpin.js` calls it): `run`, with a bug reported as one (exit 70, not 1, which says
 * what a command found). */
export async function main(args: readonly string[]): Promise<number> {
  return run(args).catch((error: unknown) => {
    process.stderr.write(`skillpin: internal error: ${inspect(error)}\n`);
    return EXIT.internal;
  });
}

// Run as a script itself (`node --import tsx src/cli.ts`, `node dist/cli.cjs`, which `verify` starts), not through
// bin/skillpin.js, which calls `main`.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href)
  void main(process.argv.slice(2)).then((status) => {
    process.exitCode = status;
  });
