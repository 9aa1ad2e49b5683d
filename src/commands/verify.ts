import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';
import { SERVER_VERSION } from '../mcp/server.ts';

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

function transportFor(options: VerifyOptions, cliEntry: string, token: string | undefined): Transport {
  if (options.url !== undefined)
    return new StreamableHTTPClientTransport(
      new URL(options.url),
      token === undefined ? {} : { authProvider: { token: async () => token } },
    );
  // The CLI is TypeScript run through tsx: the child gets tsx's loader by its resolved location, so it works from any folder.
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--import', import.meta.resolve('tsx'), cliEntry, 'serve', '--config', options.config!],
    // The config may reference environment variables (tokens, secrets): not only the SDK's short default list.
    env: process.env as Record<string, string>,
    stderr: 'ignore',
  });
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
): Promise<number> {
  if ((options.url === undefined) === (options.config === undefined)) {
    io.err('skillpin verify: give a server URL or --config <file>, not both\n');
    return 2;
  }
  const token = options.tokenEnv === undefined ? undefined : process.env[options.tokenEnv];
  if (options.tokenEnv !== undefined && (token === undefined || token === '')) {
    io.err(`skillpin verify: environment variable ${options.tokenEnv} is not set\n`);
    return 2;
  }
  const era = options.era ?? 'auto';
  const client = new Client(
    { name: 'skillpin-verify', version: SERVER_VERSION },
    era === 'legacy'
      ? {}
      : { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'auto' } },
  );
  try {
    await client.connect(transportFor(options, cliEntry, token));
  } catch (error) {
    io.err(`skillpin verify: cannot connect: ${(error as Error).message}\n`);
    return 2;
  }
  try {
    const skills = new SkillsClient(client);
    if (!skills.supported) {
      io.err('skillpin verify: the server does not declare the skills extension\n');
      return 2;
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
        io.out(`${skill.ok ? 'ok  ' : 'FAIL'}  ${skill.uri}  (${skill.files} files)\n`);
        for (const failure of skill.failures)
          io.out(`      ${failure.reason}: ${failure.uri}: ${failure.detail}\n`);
      }
      io.out(
        `${report.skills.length} skills, ${report.files} files read and verified, ${report.failures} ${report.failures === 1 ? 'failure' : 'failures'}\n`,
      );
    }
    return report.ok ? 0 : 1;
  } finally {
    await client.close();
  }
}
