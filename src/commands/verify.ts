import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import { SERVER_VERSION } from '../shared/version.ts';
import { plural } from '../shared/text.ts';

export interface VerifyOptions {
  /** A Streamable HTTP URL, or undefined with `config` to start `skillpin serve` over stdio. */
  url?: string;
  config?: string;
  era?: 'modern' | 'legacy' | 'auto';
  json?: boolean;
  /** With `url`: the environment variable holding a bearer token for a server with `auth:`. */
  tokenEnv?: string;
}

/** `skillpin verify --json` output. Version 1: fields are only ever added. */
export interface VerifyReport {
  version: 1;
  skills: Array<{
    uri: string;
    files: number;
    ok: boolean;
    failures: Array<{ uri: string; reason: string; detail: string }>;
  }>;
  files: number;
  failures: number;
  ok: boolean;
}

/** The end of a started server's stderr kept, to show when it does not start. */
const MAX_CHILD_STDERR = 16 * 1024;

function transportFor(
  options: VerifyOptions,
  cliEntry: string,
  token: string | undefined,
): { transport: Transport; stderr: () => string } {
  if (options.url !== undefined) {
    const transport = new StreamableHTTPClientTransport(
      new URL(options.url),
      token === undefined ? {} : { authProvider: { token: async () => token } },
    );
    return { transport, stderr: () => '' };
  }
  // The built CLI runs as it is; from a checkout (TypeScript under tsx) the child gets tsx's loader by its
  // resolved location, so it works from any folder.
  const loader = cliEntry.endsWith('.ts')
    ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
    : [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...loader, cliEntry, 'serve', '--config', options.config!],
    // The config may reference environment variables (tokens, secrets): not only the SDK's short default list.
    env: { ...process.env, SKILLPIN_LOG_LEVEL: process.env['SKILLPIN_LOG_LEVEL'] ?? 'warn' } as Record<
      string,
      string
    >,
    stderr: 'pipe',
  });
  let tail = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-MAX_CHILD_STDERR);
  });
  return { transport, stderr: () => tail };
}

/**
 * `skillpin verify`: connects as a host would (the SDK's SkillsClient), lists every skill, and reads and
 * verifies every file of every entry: size, digest, and for SKILL.md the frontmatter. Works against any server
 * of the skills extension, skillpin or not.
 */
export async function verify(
  options: VerifyOptions,
  cliEntry: string,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  if (options.url === undefined && options.config === undefined) {
    io.err(
      'skillpin verify: give the URL of a running server (skillpin verify http://127.0.0.1:3917/mcp), ' +
        'or --config <file> to start one over stdio and verify it\n',
    );
    return EXIT.usage;
  }
  if (options.url !== undefined && options.config !== undefined) {
    io.err('skillpin verify: give a server URL or --config <file>, not both\n');
    return EXIT.usage;
  }
  const token = options.tokenEnv === undefined ? undefined : process.env[options.tokenEnv];
  if (options.tokenEnv !== undefined && (token === undefined || token === '')) {
    io.err(`skillpin verify: environment variable ${options.tokenEnv} is not set\n`);
    return EXIT.usage;
  }
  const era = options.era ?? 'auto';
  const client = new Client(
    { name: 'skillpin-verify', version: SERVER_VERSION },
    era === 'legacy'
      ? {}
      : { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'auto' } },
  );
  const { transport, stderr } = transportFor(options, cliEntry, token);
  try {
    await client.connect(transport);
  } catch (error) {
    const said = stderr().trimEnd();
    io.err(
      `skillpin verify: cannot connect: ${(error as Error).message}\n` +
        (said === '' ? '' : `skillpin verify: the server it started wrote:\n${said}\n`),
    );
    return EXIT.unavailable;
  }
  try {
    const skills = new SkillsClient(client);
    if (!skills.supported) {
      io.err('skillpin verify: the server does not declare the skills extension\n');
      return EXIT.unavailable;
    }
    const report: VerifyReport = { version: 1, skills: [], files: 0, failures: 0, ok: true };
    for (const entry of (await skills.list()).skills) {
      const resources = entry.resources === 'dynamic' ? [] : entry.resources;
      const failures: VerifyReport['skills'][number]['failures'] = [];
      for (const resource of resources) {
        report.files++;
        try {
          await skills.read(entry, resource.uri);
        } catch (error) {
          const reason = error instanceof SkillVerificationError ? error.reason : 'read-failed';
          failures.push({ uri: resource.uri, reason, detail: (error as Error).message });
        }
      }
      report.failures += failures.length;
      report.skills.push({ uri: entry.uri, files: resources.length, ok: failures.length === 0, failures });
    }
    report.ok = report.failures === 0;
    if (options.json) io.out(`${JSON.stringify(report, null, 2)}\n`);
    else {
      for (const skill of report.skills) {
        io.out(`${skill.ok ? 'ok  ' : 'FAIL'}  ${skill.uri}  (${plural(skill.files, 'file')})\n`);
        for (const failure of skill.failures)
          io.out(`      ${failure.reason}: ${failure.uri}: ${failure.detail}\n`);
      }
      io.out(
        `${plural(report.skills.length, 'skill')}, ${plural(report.files, 'file')} read and verified, ${plural(report.failures, 'failure')}\n`,
      );
    }
    return report.ok ? EXIT.ok : EXIT.findings;
  } finally {
    await client.close();
  }
}
