import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli.ts';
import { settingsNeedingRestart, unauthenticatedRefusal } from '../../src/commands/serve.ts';
import { loadConfig } from '../../src/config/index.ts';
import { fixture } from '../helpers/fixtures.ts';
import { connectHttp, connectStdio, startHttp, writeConfig } from '../helpers/server.ts';

const catalog = fixture('catalog');
const root = fixture('root-skill');
const SOURCES = [
  { id: 'catalog', path: catalog.gitdir, commit: catalog.commits['c2']!, paths: ['skills'] },
  { id: 'root', path: root.gitdir, ref: 'HEAD' },
];
const CI_TOKEN = 'e2e-ci-token-0123456789abcdef';
const WITH_AUTH = {
  auth: { tokens: [{ name: 'ci', token: '${SKILLPIN_CI_TOKEN}', sources: ['catalog'] }] },
  sources: SOURCES,
};

/** `skillpin <args>` in this process: its exit status and what it wrote. */
async function serveArgs(...args: string[]): Promise<{ status: number; out: string; stderr: string }> {
  let stderr = '';
  let out = '';
  const status = await run(args, {
    out: (text) => void (out += text),
    err: (text) => void (stderr += text),
    interactive: false,
  });
  return { status, out, stderr };
}

const sourcesListed = async (client: SkillsClient) =>
  [...new Set((await client.list()).skills.map((skill) => skill.uri.split('/')[2]))].sort();

describe('serving beyond this machine', () => {
  it('refuses a non-loopback address without auth, saying why, before taking dataDir', async () => {
    const config = writeConfig({ sources: SOURCES });
    for (const [listen, host] of [
      ['0.0.0.0:3917', '0.0.0.0'],
      ['[::]:3917', '::'],
      ['192.0.2.7:3917', '192.0.2.7'],
    ] as const) {
      const { status, stderr } = await serveArgs('serve', '--config', config, '--http', listen);
      expect([status, stderr]).toEqual([2, `skillpin: ${unauthenticatedRefusal(host, 3917)}\n`]);
    }
    expect(unauthenticatedRefusal('0.0.0.0', 3917)).toBe(
      'refusing to serve 0.0.0.0:3917 without authentication: 0.0.0.0 is reachable from other machines, and anyone ' +
        'who reaches it could list and read every source, private ones included (Host and Origin checks stop ' +
        'browsers, not other clients). Configure auth: (static tokens or an OAuth issuer; see the README), bind a ' +
        'loopback address such as 127.0.0.1, or pass --allow-unauthenticated when something in front of skillpin ' +
        '(a proxy, a private network) decides who may call it.',
    );
  });

  it('serves a non-loopback address without auth when told to, and warns', async () => {
    const server = await startHttp(writeConfig({ sources: SOURCES }), [
      '--http',
      '0.0.0.0:0',
      '--allow-unauthenticated',
    ]);
    try {
      // Bound on every interface; the URL it names is one this machine can reach.
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(server.stderr()).toMatch(/"listening":"0\.0\.0\.0:\d+"/);
      expect(server.stderr()).toContain(
        '"msg":"serving without authentication on a non-loopback address (--allow-unauthenticated)"',
      );
      const { client, close } = await connectHttp(server.url, 'modern');
      expect(await sourcesListed(new SkillsClient(client))).toEqual(['catalog', 'root']);
      await close();
    } finally {
      await server.stop();
    }
  });

  it('serves a non-loopback address with auth, logging principals by name and never a token', async () => {
    const server = await startHttp(writeConfig(WITH_AUTH), ['--http', '0.0.0.0:0'], {
      SKILLPIN_CI_TOKEN: CI_TOKEN,
      SKILLPIN_LOG_LEVEL: 'debug',
    });
    try {
      expect(server.stderr()).toContain('"auth":{"tokens":1}');
      const { client, close } = await connectHttp(server.url, 'modern', CI_TOKEN);
      expect(await sourcesListed(new SkillsClient(client))).toEqual(['catalog']);
      await close();
      const refused = await fetch(server.url, {
        method: 'POST',
        headers: { authorization: 'Bearer e2e-wrong-token-0123456789', 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
      // skillpin verify reads and checks every file the token may see; without the token it cannot connect.
      vi.stubEnv('VERIFY_TOKEN', CI_TOKEN);
      const verified = await serveArgs('verify', server.url, '--token-env', 'VERIFY_TOKEN');
      vi.unstubAllEnvs();
      expect([verified.status, verified.out.split('\n').at(-2)]).toEqual([
        0,
        '7 skills, 15 files read and verified, 0 failures',
      ]);
      const unverified = await serveArgs('verify', server.url);
      expect([unverified.status, unverified.stderr]).toEqual([
        2,
        'skillpin verify: cannot connect: Version negotiation failed: the server requires authorization (HTTP 401)\n',
      ]);
      const logged = server.stderr();
      expect(logged).toContain('"principal":"token:ci"');
      expect(logged).toContain('"reason":"auth-token-invalid"');
      expect(logged).not.toContain(CI_TOKEN);
      expect(logged).not.toContain('e2e-wrong-token');
    } finally {
      await server.stop();
    }
  });

  it('asks nothing of stdio: the local user sees every source', async () => {
    const config = writeConfig(WITH_AUTH);
    const previous = process.env['SKILLPIN_CI_TOKEN'];
    process.env['SKILLPIN_CI_TOKEN'] = CI_TOKEN;
    try {
      const { client, close } = await connectStdio(config, 'modern');
      expect(await sourcesListed(new SkillsClient(client))).toEqual(['catalog', 'root']);
      await close();
    } finally {
      if (previous === undefined) delete process.env['SKILLPIN_CI_TOKEN'];
      else process.env['SKILLPIN_CI_TOKEN'] = previous;
    }
  });
});

describe('a reload that changes what is set up once', () => {
  const C = 'a'.repeat(40);
  const configOf = (extra: Record<string, unknown>, source: Record<string, unknown> = {}) =>
    loadConfig(
      writeConfig({
        ...extra,
        sources: [{ id: 'one', url: 'https://example.invalid/one.git', commit: C, ...source }],
      }),
      { SKILLPIN_TEST_TOKEN: 'test-token-0123456789' },
    );

  it('names skill_run grants and settings, auth and cache scopes as waiting for a restart', () => {
    const running = configOf({});
    // dataDir differs per written config: only what each case changes besides it is named.
    const waiting = (next: ReturnType<typeof configOf>) =>
      settingsNeedingRestart(running, { ...next, dataDir: running.dataDir, file: running.file });
    expect(waiting(configOf({}))).toEqual([]);
    expect(waiting(configOf({ runs: { confirm: 'refuse' } }))).toEqual(['runs']);
    expect(waiting(configOf({}, { run: 'all-declared' }))).toEqual(['sources[].run']);
    expect(waiting(configOf({}, { cacheScope: 'private' }))).toEqual(['sources[].cacheScope']);
    // A private source joining public ones makes the listing private: that hint waits too.
    const joined = loadConfig(
      writeConfig({
        sources: [
          { id: 'one', url: 'https://example.invalid/one.git', commit: C },
          { id: 'two', url: 'https://example.invalid/two.git', commit: C, cacheScope: 'private' },
        ],
      }),
    );
    expect(waiting(joined)).toEqual(['sources[].cacheScope']);
    expect(
      waiting(configOf({ auth: { tokens: [{ name: 'ci', token: '${SKILLPIN_TEST_TOKEN}' }] } })),
    ).toEqual(['auth']);
  });
});
