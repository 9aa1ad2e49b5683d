import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { groupGone, pidsRunning } from '../helpers/processes.ts';
import {
  connectHttp,
  type Era,
  type HttpServerProcess,
  MODERN,
  startHttp,
  writeConfig,
} from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const scripts = fixture('scripts');
const c1 = scripts.commits['c1']!;
const c2 = scripts.commits['c2']!;

/** skill_run's and skill_list's structured content, as far as these tests read it. */
interface Content {
  status: string;
  confirmToken: string;
  stdout: string;
  preview: { willRun: { commit: string; cwd: string; envNames: string[] } };
  skills: Array<Record<string, unknown>>;
}
type ToolResult = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: Content };

describe('skill_run end to end over HTTP, with a plain MCP client', () => {
  let server: HttpServerProcess;
  let client: Client;
  let close: () => Promise<void>;
  let repo: string;
  const sharedRoots: string[] = [];
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  /** The server's log lines for runs that were cancelled, oldest first. */
  const cancelledLines = () =>
    server
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"msg":"skill_run: cancelled"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const envProbe = (commit: string) => `skill://scripts/${commit}/skills/env-probe/SKILL.md`;

  beforeAll(async () => {
    // A repository of our own whose main starts at c1, so the test can move it.
    repo = path.join(tempDir('skillpin-e2e-run-'), 'scripts.git');
    git(['clone', '--quiet', '--bare', scripts.gitdir, repo]);
    git(['--git-dir', repo, 'update-ref', 'refs/heads/main', c1]);
    const config = writeConfig({
      sources: [
        {
          id: 'scripts',
          path: repo,
          ref: 'main',
          poll: '1s',
          run: [
            { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_TOKEN', 'PROBE_UNSET'] },
            { skill: 'skills/bounds', script: 'scripts/argv.js' },
            { skill: 'skills/bounds', script: 'scripts/slow.js' },
          ],
        },
      ],
    });
    server = await startHttp(config, [], { PROBE_TOKEN: 'granted-value', SKILLPIN_TEST_SECRET: 'hunter2' });
    ({ client, close } = await connectHttp(server.url, 'modern'));
  });
  afterAll(async () => {
    await close?.();
    await server?.stop();
    // A root server's scripts run as nobody from a folder of /tmp it can reach, outside the test's temp dirs.
    for (const root of sharedRoots)
      if (root.startsWith('/tmp/skillpin-run-')) rmSync(root, { recursive: true, force: true });
  });

  it('lists, previews, confirms and runs; the script gets only what it was granted', async () => {
    const listed = await call('skill_list', {});
    const skills = listed.structuredContent!['skills'] as Array<Record<string, unknown>>;
    expect(skills.find((s) => s['uri'] === envProbe(c1))).toMatchObject({
      runnable: ['scripts/env.js'],
      declaredNotGranted: [],
      unavailableScripts: [],
    });
    const preview = await call('skill_run', {
      uri: envProbe(c1),
      script: 'scripts/env.js',
      args: ['--json'],
    });
    expect(preview.structuredContent).toMatchObject({
      status: 'confirmation-required',
      preview: { willRun: { commit: c1, argv: ['scripts/env.js', '--json'], envNotSet: ['PROBE_UNSET'] } },
    });
    const { willRun } = preview.structuredContent!['preview'];
    const ran = await call('skill_run', {
      uri: envProbe(c1),
      script: 'scripts/env.js',
      args: ['--json'],
      confirmToken: preview.structuredContent!['confirmToken'],
    });
    expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0, truncated: false });
    const printed = JSON.parse(ran.structuredContent!['stdout']) as {
      env: Record<string, string>;
      cwd: string;
      parentEnviron: string;
    };
    expect(Object.keys(printed.env).sort()).toEqual(willRun.envNames);
    expect(printed.env['PROBE_TOKEN']).toBe('granted-value');
    expect(printed.cwd).toBe(willRun.cwd);
    // As root the script runs as nobody, who cannot open the server's /proc files at all; as another user the
    // server's initial environment block was cleared at start: its parent's environ holds nothing.
    expect(printed.parentEnviron).toBe(process.getuid?.() === 0 ? 'unreadable: EACCES' : '');
    if (process.getuid?.() === 0) sharedRoots.push(path.resolve(willRun.cwd, '../../..'));
    expect(ran.structuredContent!['stdout']).not.toContain('hunter2');
    expect(server.stderr()).not.toContain('hunter2');
    expect(server.stderr()).not.toContain('granted-value');
  });

  it('refuses a token when the followed ref moved between preview and run', async () => {
    const byName = { name: 'bounds', script: 'scripts/argv.js' };
    const preview = await call('skill_run', byName);
    expect(preview.structuredContent!['preview'].willRun.commit).toBe(c1);
    git(['--git-dir', repo, 'update-ref', 'refs/heads/main', c2]);
    await until('the listing to show c2', async () => {
      const listed = await call('skill_list', { source: 'scripts' });
      return (listed.structuredContent!['skills'] as Array<{ commit: string }>)[0]?.commit === c2;
    });
    const moved = await call('skill_run', {
      ...byName,
      confirmToken: preview.structuredContent!['confirmToken'],
    });
    expect(moved.isError).toBe(true);
    expect(moved.structuredContent).toMatchObject({ status: 'refused', code: 'run-preview-changed' });
    const again = await call('skill_run', byName);
    const ran = await call('skill_run', {
      ...byName,
      confirmToken: again.structuredContent!['confirmToken'],
    });
    expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0, origin: { commit: c2 } });
  });

  it.each([
    ['2026-07-28', 'input_required', { versionNegotiation: { mode: { pin: MODERN } } }],
    ['2025-11-25', 'elicitation/create in a session', {}],
  ])(
    'asks a host that can show a prompt, on %s (%s), and runs once it is accepted',
    async (era, _how, negotiation) => {
      const prompts: string[] = [];
      const asking = new Client(
        { name: 'skillpin-test', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } }, ...negotiation },
      );
      asking.setRequestHandler('elicitation/create', async (request) => {
        prompts.push((request.params as { message: string }).message);
        return { action: 'accept', content: { confirm: true } };
      });
      await asking.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        expect(asking.getNegotiatedProtocolVersion()).toBe(era);
        const ran = (await asking.callTool({
          name: 'skill_run',
          arguments: { name: 'bounds', script: 'scripts/argv.js', args: ['asked'] },
        })) as ToolResult;
        expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0 });
        expect(JSON.parse(ran.structuredContent!['stdout']).argv).toEqual(['asked']);
        expect(prompts).toHaveLength(1);
        expect(prompts[0]).toContain('argv: ["scripts/argv.js","asked"]');
      } finally {
        await asking.close();
      }
    },
  );

  it.each([
    ['2026-07-28', 'the HTTP request is aborted', 'modern'],
    ['2025-11-25', 'notifications/cancelled in a session', 'legacy'],
  ] as const)(
    'ends the script when a %s client cancels its call (%s), and logs the run cancelled',
    async (_era, _how, era: Era) => {
      const cancelling = await connectHttp(server.url, era);
      try {
        const args = { name: 'bounds', script: 'scripts/slow.js', args: ['60'] };
        const preview = (await cancelling.client.callTool({
          name: 'skill_run',
          arguments: args,
        })) as ToolResult;
        const script = path.join(preview.structuredContent!['preview'].willRun.cwd, 'scripts/slow.js');
        const before = cancelledLines().length;
        const controller = new AbortController();
        const call = cancelling.client.callTool(
          {
            name: 'skill_run',
            arguments: { ...args, confirmToken: preview.structuredContent!['confirmToken'] },
          },
          { signal: controller.signal },
        );
        const pid = await until('slow.js to start', () => pidsRunning(script)[0]);
        controller.abort();
        await expect(call).rejects.toThrow();
        await until('the script group to be gone', () => groupGone(pid));
        const logged = await until('the run to be logged as cancelled', () => cancelledLines()[before]);
        expect(logged).toMatchObject({
          script: 'scripts/slow.js',
          exitCode: null,
          signal: 'SIGTERM',
          timedOut: false,
          cancelled: true,
        });
      } finally {
        await cancelling.close();
      }
    },
  );
});
