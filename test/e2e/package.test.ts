import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli.ts';
import { fixture, fixtureFile, PROJECT_ROOT } from '../helpers/fixtures.ts';
import { hostEnvironment, installGlobally, packProject, type Packed } from '../helpers/package.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const version = (
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
/** The skills of the catalog fixture at c2, as a host lists them. */
const LISTED = [
  'changelog-writer',
  'data-pipeline',
  'git-commit-style',
  'pdf-forms',
  'release-notes',
  'validate-rows',
  'vercel-composition-patterns',
];
/** Where the README's stdio lines name the config: replaced by a real one. */
const PLACEHOLDER = '/abs/path/skillpin.yaml';
/** Where the README names the installed command by its absolute path: replaced by the test prefix's. */
const COMMAND_PLACEHOLDER = '/abs/npm-prefix/bin/skillpin';

/** Lists the skills through `command args…` started over stdio from `cwd`, as a host starts it. */
async function listThrough(command: string, args: string[], cwd: string, env: Record<string, string>) {
  const client = new Client({ name: 'skillpin-host-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd, env, stderr: 'ignore' }));
  try {
    const skills = new SkillsClient(client);
    const { skills: entries } = await skills.list();
    const forms = entries.find((entry) => entry.uri.endsWith('/skills/pdf-forms/SKILL.md'))!;
    const read = await skills.read(forms, 'references/FORMS.md');
    return {
      names: entries.map((entry) => entry.frontmatter.name).sort(),
      verified:
        read.verified &&
        Buffer.from(read.bytes).equals(fixtureFile('catalog', 'c2', 'skills/pdf-forms/references/FORMS.md')),
    };
  } finally {
    await client.close();
  }
}

interface Snippet {
  host: string;
  command: string;
  args: string[];
}

/** Every stdio command line of the README's "Connect a host": after `--` in a shell line, or a JSON server entry. */
function readmeSnippets(): Snippet[] {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('\n## Connect a host\n'),
    readme.indexOf('\n## ', readme.indexOf('\n## Connect a host\n') + 1),
  );
  const snippets: Snippet[] = [];
  let host = '';
  for (const [, heading, language, body] of section.matchAll(/^### (.+)$|^```(\w+)\n([\s\S]*?)^```$/gm)) {
    if (heading !== undefined) {
      host = heading;
      continue;
    }
    if (language === 'json') {
      const servers = JSON.parse(body!) as Record<
        string,
        Record<string, { command?: string; args?: string[] }>
      >;
      for (const entry of Object.values(Object.values(servers)[0]!))
        if (entry.command !== undefined)
          snippets.push({ host, command: entry.command, args: entry.args ?? [] });
      continue;
    }
    for (const line of body!.split('\n')) {
      const words = line.trim().split(/\s+/);
      const cut = words.indexOf('--');
      if (cut === -1) continue;
      expect(line).not.toMatch(/["'\\$`#]/);
      const [command, ...args] = words.slice(cut + 1);
      snippets.push({ host: `${host} (${words.slice(0, 2).join(' ')})`, command: command!, args });
    }
  }
  return snippets;
}

/** The lines of the README's MCP Inspector block, as written. */
function readmeInspectorLines(): string[] {
  const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const block = /\n### MCP Inspector\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  return block.trim().split('\n');
}

describe('the packed package', () => {
  let packed: Packed;
  let prefix: string;
  let installed: string;
  let env: Record<string, string>;

  beforeAll(() => {
    packed = packProject(tempDir('skillpin-pack-'));
    prefix = tempDir('skillpin-prefix-');
    installed = installGlobally(packed, prefix);
    env = hostEnvironment(prefix);
  }, 300_000);

  it('holds only what runs, the README, LICENSE and the example config; no TypeScript runner', () => {
    const outside = packed.files.filter(
      (file) =>
        ![
          'dist/cli.cjs',
          'dist/cli.cjs.map',
          'bin/skillpin.js',
          'bin/compileCache.js',
          'package.json',
          'README.md',
          'LICENSE',
          'config.example.yaml',
        ].includes(file),
    );
    expect(outside).toEqual([]);
    expect(packed.files).toContain('dist/cli.cjs');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      license: string;
    };
    expect(
      Object.keys(manifest.dependencies).filter((name) => ['tsx', 'esbuild', 'typescript'].includes(name)),
    ).toEqual([]);
    expect(
      ['tsx', 'esbuild'].map((name) => existsSync(path.join(prefix, 'lib', 'node_modules', name))),
    ).toEqual([false, false]);
    expect([
      manifest.license,
      readFileSync(path.join(installed, 'LICENSE'), 'utf8').split('\n', 2)[0]!.trim(),
    ]).toEqual(['Apache-2.0', 'Apache License']);
  });

  it('answers npx skillpin --version in the folder it was installed in, with plain node', () => {
    const result = spawnSync('npx', ['skillpin', '--version'], {
      cwd: path.join(prefix, 'lib'),
      env,
      encoding: 'utf8',
    });
    expect([result.status, result.stdout]).toEqual([0, `${version}\n`]);
    expect(readFileSync(path.join(installed, 'bin', 'skillpin.js'), 'utf8').split('\n', 1)[0]).toBe(
      '#!/usr/bin/env node',
    );
  });

  it('exits 64 on a usage error, with the message and the usage on stderr', () => {
    const c1 = catalog.commits['c1']!;
    const result = spawnSync(
      path.join(prefix, 'bin', 'skillpin'),
      ['check', catalog.gitdir, '--commit', c1, '--ref', 'main'],
      { cwd: tempDir(), env, encoding: 'utf8' },
    );
    expect([result.status, result.stdout]).toEqual([64, '']);
    expect(result.stderr.split('\n').slice(0, 3)).toEqual([
      "error: option '--commit <sha>' cannot be used with option '--ref <ref>'",
      '',
      'Usage: skillpin check [options] [repository]',
    ]);
  });

  it('checks a fixture repository from another folder exactly as the checkout does', async () => {
    const args = ['check', catalog.gitdir, '--commit', c2, '--paths', 'skills', '--json'];
    const result = spawnSync('npx', ['-y', 'skillpin', ...args], { cwd: tempDir(), env, encoding: 'utf8' });
    let expected = '';
    vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent');
    const code = await run(args, {
      out: (text) => void (expected += text),
      err: () => undefined,
      interactive: false,
    });
    vi.unstubAllEnvs();
    expect([result.status, result.stdout]).toEqual([code, expected]);
    expect((JSON.parse(result.stdout) as { commit: string }).commit).toBe(c2);
  });

  it('serves over stdio from another folder to the SDK client, which verifies what it reads', async () => {
    const config = writeConfig({
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] }],
    });
    const listed = await listThrough(
      path.join(prefix, 'bin', 'skillpin'),
      ['serve', '-c', config],
      tempDir(),
      env,
    );
    expect(listed).toEqual({ names: LISTED, verified: true });
  });

  it("starts every host's stdio command line of the README, as written, from a temporary folder", async () => {
    const snippets = readmeSnippets();
    expect(snippets.map((snippet) => snippet.host)).toEqual([
      'Claude Code (claude mcp)',
      'Claude Code',
      'Claude Desktop',
      'VS Code',
      'Cursor',
      'MCP Inspector (npx -y)',
      'MCP Inspector (npx -y)',
    ]);
    expect(readmeInspectorLines()).toEqual([
      'npx -y @modelcontextprotocol/inspector -- skillpin serve -c /abs/path/skillpin.yaml',
      'npx -y @modelcontextprotocol/inspector --cli --method resources/list -- skillpin serve -c /abs/path/skillpin.yaml',
      'npx -y @modelcontextprotocol/inspector --cli http://127.0.0.1:3917/mcp --method tools/list',
    ]);
    const config = writeConfig({
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] }],
    });
    // A host started from the user's shell finds `skillpin` on PATH, in the global prefix's bin folder.
    const shell = { ...env, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${env['PATH']}` };
    for (const snippet of snippets) {
      expect([snippet.command, ...snippet.args].join(' ')).toMatch(
        new RegExp(`^(skillpin|${COMMAND_PLACEHOLDER}) serve -c ${PLACEHOLDER}$`),
      );
      const command =
        snippet.command === COMMAND_PLACEHOLDER ? path.join(prefix, 'bin', 'skillpin') : snippet.command;
      const args = snippet.args.map((arg) => (arg === PLACEHOLDER ? config : arg));
      const started = command === 'skillpin' ? shell : env;
      expect({ host: snippet.host, ...(await listThrough(command, args, tempDir(), started)) }).toEqual({
        host: snippet.host,
        names: LISTED,
        verified: true,
      });
    }
  });

  it('is described to the MCP Registry by server.json: the same name, version and command line', () => {
    const pkg = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const server = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'server.json'), 'utf8')) as {
      name: string;
      version: string;
      description: string;
      packages: Array<{
        registryType: string;
        identifier: string;
        version: string;
        transport: { type: string };
        packageArguments: Array<{ type: string; value?: string; name?: string }>;
      }>;
    };
    const [npmPackage] = server.packages;
    expect([server.name, server.version, npmPackage!.identifier, npmPackage!.version]).toEqual([
      pkg['mcpName'],
      pkg['version'],
      pkg['name'],
      pkg['version'],
    ]);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect([npmPackage!.registryType, npmPackage!.transport.type]).toEqual(['npm', 'stdio']);
    expect(npmPackage!.packageArguments.map((arg) => arg.value ?? arg.name)).toEqual(['serve', '--config']);
    const help = execFileSync(path.join(prefix, 'bin', 'skillpin'), ['serve', '--help'], {
      env,
      encoding: 'utf8',
    });
    expect(help).toContain('-c, --config <file>');
  });
});
