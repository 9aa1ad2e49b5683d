import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { run } from '../../src/cli.ts';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { settingsNeedingRestart, startServing, unauthenticatedRefusal } from '../../src/commands/serve.ts';
import { EVERY_SOURCE } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { createLogger, silentLogger } from '../../src/shared/logger.ts';
import type { SyncOutcome } from '../../src/shared/status.ts';
import { newHolder } from '../../src/sync/dataDir/lease.ts';
import { withStateMutex } from '../../src/sync/dataDir/state.ts';
import { fixture } from '../helpers/fixtures.ts';
import { startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { connectHttp, modernRequest, writeConfig } from '../helpers/server.ts';
import { connectInProcess, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';

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
      expect([status, stderr]).toEqual([64, `skillpin: ${unauthenticatedRefusal(host, 3917)}\n`]);
    }
    expect(unauthenticatedRefusal('0.0.0.0', 3917)).toBe(
      'refusing to serve 0.0.0.0:3917 without authentication: 0.0.0.0 is reachable from other machines, and anyone ' +
        'who reaches it could list and read every source, private ones included (Host and Origin checks stop ' +
        'browsers, not other clients). Configure auth: (static tokens or an OAuth issuer; see docs/http-and-auth.md), bind a ' +
        'loopback address such as 127.0.0.1, or pass --allow-unauthenticated when something in front of skillpin ' +
        '(a proxy, a private network) decides who may call it.',
    );
  });

  it('serves a non-loopback address without auth when told to, and warns', async () => {
    const server = await serveInProcess(writeConfig({ sources: SOURCES }), {
      http: { host: '0.0.0.0', port: 0 },
      allowUnauthenticated: true,
    });
    try {
      // Bound on every interface; the URL it names is one this machine can reach.
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(server.logs()).toMatch(/"listening":"0\.0\.0\.0:\d+"/);
      expect(server.logs()).toContain(
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
    const server = await serveInProcess(writeConfig(WITH_AUTH), {
      http: { host: '0.0.0.0', port: 0 },
      env: { SKILLPIN_CI_TOKEN: CI_TOKEN },
      logLevel: 'debug',
    });
    try {
      expect(server.logs()).toContain('"auth":{"tokens":1}');
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
        69,
        'skillpin verify: cannot connect: Version negotiation failed: the server requires authorization (HTTP 401)\n',
      ]);
      const logged = server.logs();
      expect(logged).toContain('"principal":"token:ci"');
      expect(logged).toContain('"reason":"auth-token-invalid"');
      expect(logged).not.toContain(CI_TOKEN);
      expect(logged).not.toContain('e2e-wrong-token');
    } finally {
      await server.stop();
    }
  });

  it('asks nothing of stdio: the local user sees every source', async () => {
    const { client, close } = await connectInProcess(writeConfig(WITH_AUTH), 'modern', {
      env: { SKILLPIN_CI_TOKEN: CI_TOKEN },
    });
    expect(await sourcesListed(new SkillsClient(client))).toEqual(['catalog', 'root']);
    await close();
  });
});

describe('a stdio host starting a server on a warm dataDir', () => {
  /** `startServing` over an in-memory stdio connection, the syncs it settles, and a connected client's listing. */
  async function startOverStdio(config: Config, logger = silentLogger()) {
    const settled: SyncOutcome[] = [];
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const serving = await startServing(config, {
      logger,
      transport: serverSide,
      onSettled: (outcome) => void settled.push(outcome),
    });
    const client = new Client({ name: 'skillpin-test', version: '1.0.0' });
    await client.connect(clientSide);
    const list = async () => {
      const { skills } = await new SkillsClient(client).list();
      // What had synced when the host had its listing.
      return { skills, settledBefore: [...settled] };
    };
    const close = async () => {
      await client.close();
      await serving.close();
    };
    return { serving, list, close };
  }

  it("lists a pinned local source's restored commit at once: that source's start sync runs after the first answer", async () => {
    const config = loadConfig(writeConfig({ sources: [SOURCES[0]!] }));
    const first = await serveInProcess(config.file, { http: false });
    await first.stop();
    // The start sync of the pinned source records its state under the state mutex, held here until the host
    // has its listing: had the start waited for that sync, it would wait here for ever.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const mutex = withStateMutex(config.dataDir, newHolder(), () => held);
    const host = await startOverStdio(config);
    const { skills, settledBefore } = await host.list();
    expect([skills.length, new Set(skills.map((skill) => skill.uri.split('/')[3])), settledBefore]).toEqual([
      7,
      new Set([catalog.commits['c2']]),
      [],
    ]);
    release();
    await mutex;
    expect(await host.serving.firstSyncs).toEqual([
      { id: 'catalog', ok: true, commit: catalog.commits['c2'], changed: false },
    ]);
    await host.close();
  });

  it('finds a store that lost its objects after the first answer, says so and fetches them again', async () => {
    const remoteRoot = tempDir('skillpin-start-damage-');
    const repo = pushableRepo(remoteRoot, 'skills');
    const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'start'), 'alpha/notes.md': 'notes\n' });
    const git = await startGitHttpServer({ root: remoteRoot });
    try {
      const config = loadConfig(
        writeConfig({
          sync: { retryMin: '1h', retryMax: '1h' },
          sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main', poll: '1h' }],
        }),
      );
      const first = await serveInProcess(config.file, { http: false });
      await first.serving.firstSyncs;
      await first.stop();
      const packDir = path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack');
      for (const file of readdirSync(packDir)) rmSync(path.join(packDir, file));
      let logged = '';
      const logger = createLogger({
        level: 'info',
        format: 'json',
        destination: { write: (line) => void (logged += line) },
      });
      const host = await startOverStdio(config, logger);
      // Listed from the restored index, before any store check: nothing has synced yet.
      const { skills, settledBefore } = await host.list();
      expect([skills.map((skill) => skill.uri), settledBefore]).toEqual([
        [`skill://skills/${commit}/alpha/SKILL.md`],
        [],
      ]);
      expect(await host.serving.firstSyncs).toEqual([
        { id: 'skills', ok: true, commit, changed: false, repaired: [commit] },
      ]);
      // The store check of the start sync found it, said so, and fetched the objects again.
      const said = logged
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line['source'] === 'skills' && line['kind'] !== undefined)
        .map(({ level, msg, commit: at, kind, log, why }) => ({ level, msg, at, kind, log, why }));
      expect(said).toEqual([
        {
          level: 'warn',
          msg: `objects of commit ${commit} are missing from the store or unreadable; fetching them again`,
          at: commit,
          kind: 'objects',
          log: `3 object(s) missing, such as ${commit}`,
          why: 'start',
        },
        {
          level: 'info',
          msg: 'repaired a damaged commit',
          at: commit,
          kind: 'objects',
          log: undefined,
          why: 'start',
        },
      ]);
      await host.close();
    } finally {
      await git.close();
    }
  });
});

describe('the search index of a published namespace', () => {
  /** Once every listed namespace's search index is ready: each source's stats, and what a query finds (URI, score). */
  const searched = async (server: Awaited<ReturnType<typeof serveInProcess>>) => {
    const listed = [...server.serving.catalog.listed()].sort((a, b) => a.source.localeCompare(b.source));
    const { served } = server.serving;
    await vi.waitFor(() => expect(listed.every((ns) => served.searchStats(ns) !== undefined)).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    const stats = listed.map((ns) => [
      ns.source,
      served.searchStats(ns)?.stored,
      served.searchStats(ns)?.skills,
      served.searchStats(ns)?.unread,
    ]);
    const hits = (await served.at(EVERY_SOURCE).search(listed, 'pdf forms helper')).map((hit) => [
      hit.served.uri,
      hit.score,
    ]);
    return { stats, hits };
  };

  it('is built and saved with the commit index when published, with no search asked; a restart reads it and tokenises nothing', async () => {
    const config = writeConfig({ sources: SOURCES });
    const first = await serveInProcess(config, { http: false });
    const built = await searched(first).finally(() => first.stop());
    expect(built.stats).toEqual([
      ['catalog', false, 7, 0],
      ['root', false, 1, 0],
    ]);
    expect(built.hits.length).toBeGreaterThan(0);
    const dataDir = (parse(readFileSync(config, 'utf8')) as { dataDir: string }).dataDir;
    expect(readdirSync(path.join(dataDir, 'index', 'catalog')).sort()).toEqual([
      `${catalog.commits['c2']}.json`,
      `${catalog.commits['c2']}.search`,
    ]);
    const second = await serveInProcess(config, { http: false });
    const read = await searched(second).finally(() => second.stop());
    expect(read).toEqual({
      stats: [
        ['catalog', true, 7, 0],
        ['root', true, 1, 0],
      ],
      hits: built.hits,
    });
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
      {
        SKILLPIN_TEST_TOKEN: 'test-token-0123456789',
        REDIS_URL: 'redis://127.0.0.1:6379',
        SKILLPIN_COORDINATION_SECRET: 'coordination-secret-0123456789',
      },
    );

  it('names skill_run grants and settings and auth as waiting for a restart', () => {
    const running = configOf({});
    // dataDir differs per written config: only what each case changes besides it is named.
    const waiting = (next: ReturnType<typeof configOf>) =>
      settingsNeedingRestart(running, { ...next, dataDir: running.dataDir, file: running.file });
    expect(waiting(configOf({}))).toEqual([]);
    expect(waiting(configOf({ runs: { confirm: 'refuse' } }))).toEqual(['runs']);
    expect(waiting(configOf({}, { run: 'all-declared' }))).toEqual(['sources[].run']);
    // Cache hints follow the config running (the next test).
    expect(waiting(configOf({}, { cacheScope: 'private' }))).toEqual([]);
    expect(waiting(configOf({ cache: { listTtlMs: 5000 } }))).toEqual([]);
    expect(
      waiting(configOf({ auth: { tokens: [{ name: 'ci', token: '${SKILLPIN_TEST_TOKEN}' }] } })),
    ).toEqual(['auth']);
    // Coordination connects once, at the start.
    expect(
      waiting(
        configOf({ coordination: { redis: '${REDIS_URL}', secret: '${SKILLPIN_COORDINATION_SECRET}' } }),
      ),
    ).toEqual(['coordination']);
  });
});

describe('a reload', () => {
  const hint = async (url: string, method: string, params: Record<string, unknown> = {}) => {
    const request = modernRequest(method, params);
    const response = await fetch(url, {
      method: 'POST',
      headers: request.headers,
      body: await request.text(),
    });
    const { result } = (await response.json()) as { result: Record<string, unknown> };
    return [result['ttlMs'], result['cacheScope']];
  };

  it('makes the listing private at once when a private source joins public ones', async () => {
    const publicOnly = { sources: [{ ...SOURCES[0], cacheScope: 'public' }] };
    const file = writeConfig(publicOnly);
    const server = await serveInProcess(file);
    try {
      expect(await hint(server.url, 'skills/list')).toEqual([60_000, 'public']);
      writeFileSync(
        file,
        stringify({
          ...parse(readFileSync(file, 'utf8')),
          sources: [...publicOnly.sources, { ...SOURCES[1], cacheScope: 'private' }],
        }),
      );
      const outcome = await server.serving.reload();
      expect(outcome).toMatchObject({ applied: true, changes: { added: ['root'] }, waiting: [] });
      expect(await hint(server.url, 'skills/list')).toEqual([60_000, 'private']);
      expect(await hint(server.url, 'resources/list')).toEqual([60_000, 'private']);
    } finally {
      await server.stop();
    }
  });

  it('with problems changes nothing and says which', async () => {
    const file = writeConfig({ sources: SOURCES });
    const server = await serveInProcess(file);
    try {
      writeFileSync(file, 'sources: 3\n');
      const outcome = await server.serving.reload();
      expect(outcome.applied).toBe(false);
      expect(outcome).toMatchObject({ problems: [expect.stringContaining('sources')] });
      const { client, close } = await connectHttp(server.url, 'modern');
      expect(await sourcesListed(new SkillsClient(client))).toEqual(['catalog', 'root']);
      await close();
    } finally {
      await server.stop();
    }
  });
});
