import { type Client, SdkHttpError } from '@modelcontextprotocol/client';
import { type Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { SESSION_NOT_FOUND } from '../../src/http/mcpEndpoint.ts';
import { manualClock, type ManualClock } from '../helpers/clock.ts';
import { fixture } from '../helpers/fixtures.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { type RoundRobinProxy, startRoundRobinProxy } from '../helpers/roundRobinProxy.ts';
import { connectHttp, type Era, writeConfig } from '../helpers/server.ts';
import { waitReady } from '../helpers/ready.ts';
import { serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const catalog = fixture('catalog');
const TOKEN = 'replica-host-token-0123456789';
const SECRET = 'replica-webhook-secret';
const POLL_MS = 60_000;
const REPLICAS = 3;

const pageSchema = z.object({
  skills: z.array(z.object({ uri: z.string() }).passthrough()),
  nextCursor: z.string().optional(),
});
type Page = z.infer<typeof pageSchema>;

interface Replica {
  url: string;
  clock: ManualClock;
  close(): Promise<void>;
}

describe('three replicas of one config behind a round-robin proxy', () => {
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  let replicas: Replica[];
  let proxy: RoundRobinProxy;
  const open: Array<() => Promise<void>> = [];
  const firstCommit: string[] = [];

  const connect = async (url: string, era: Era = 'modern'): Promise<Client> => {
    const { client, close } = await connectHttp(url, era, TOKEN);
    open.push(close);
    return client;
  };
  /** The commit a replica lists for source `live`. */
  const liveAt = async (client: Client) => {
    const { skills } = await new SkillsClient(client).list();
    return skills.find((skill) => skill.uri.startsWith('skill://live/'))?.uri.split('/')[3];
  };

  beforeAll(async () => {
    const root = tempDir('skillpin-replicas-');
    repo = pushableRepo(root, 'skills');
    firstCommit.push(
      repo.push({
        'alpha/SKILL.md': skillMd('alpha', 'v1'),
        'alpha/guide.md': 'guide v1\n',
        'beta/SKILL.md': skillMd('beta', 'v1'),
      }),
    );
    git = await startGitHttpServer({ root });
    vi.stubEnv('SKILLPIN_HOST_TOKEN', TOKEN);
    vi.stubEnv('SKILLPIN_WEBHOOK_SECRET', SECRET);
    const config = writeConfig({
      pageSize: 2,
      webhook: { secret: '${SKILLPIN_WEBHOOK_SECRET}' },
      auth: { tokens: [{ name: 'host', token: '${SKILLPIN_HOST_TOKEN}' }] },
      sources: [
        { id: 'catalog', path: catalog.gitdir, commit: catalog.commits['c2']!, paths: ['skills'] },
        { id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll: '1m' },
      ],
    });
    replicas = [];
    for (let i = 0; i < REPLICAS; i++) {
      const clock = manualClock();
      const running = await serveInProcess(config, { dataDir: tempDir(`skillpin-replica-${i}-`), clock });
      replicas.push({ url: running.url, clock, close: running.stop });
      await waitReady(running.url);
    }
    proxy = await startRoundRobinProxy(replicas.map((replica) => replica.url));
  });
  afterAll(async () => {
    for (const close of open) await close().catch(() => undefined);
    await proxy.close();
    for (const replica of replicas) await replica.close();
    await git.close();
    vi.unstubAllEnvs();
  });

  it('serves one host paging across replicas the same pages, cursors, entries, manifests and bytes', async () => {
    const host = await connect(`${proxy.url}/mcp`);
    const direct = await Promise.all(replicas.map((replica) => connect(replica.url)));
    const pages: Array<{ cursor?: string; page: Page }> = [];
    const listedBy: number[] = [];
    let cursor: string | undefined;
    do {
      const params = cursor === undefined ? {} : { cursor };
      const page = await host.request({ method: 'skills/list', params }, pageSchema);
      listedBy.push(proxy.routed.at(-1)!.upstream);
      pages.push({ ...(cursor === undefined ? {} : { cursor }), page });
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    // 9 skills, 2 a page: 5 pages, each cursor handed on to the next replica in turn.
    expect(pages.length).toBe(5);
    expect(new Set(listedBy).size).toBe(REPLICAS);
    for (const { cursor: at, page } of pages)
      for (const client of direct)
        expect(
          await client.request(
            { method: 'skills/list', params: at === undefined ? {} : { cursor: at } },
            pageSchema,
          ),
        ).toEqual(page);

    const entries = pages.flatMap(({ page }) => page.skills) as unknown as Skill[];
    expect(entries.length).toBe(9);
    const skills = new SkillsClient(host);
    for (const entry of entries) {
      // skills/get carries the namespace's provenance on the entry, which a listing gives once per page.
      const got = await Promise.all(
        direct.map(async (client) => (await new SkillsClient(client).get(entry.uri)).skill),
      );
      for (const skill of got) expect(skill).toEqual(got[0]);
      expect({ ...got[0]!, _meta: undefined }).toEqual({ ...entry, _meta: undefined });
      expect(got[0]!._meta).toMatchObject(entry._meta as Record<string, unknown>);
      // skillpin's manifests list objects (uri, digest, size), never bare URIs.
      for (const file of entry.resources as Array<{ uri: string }>) {
        const relative = file.uri.slice(entry.uri.length - 'SKILL.md'.length);
        const read = await skills.read(entry, relative);
        expect([relative, read.verified]).toEqual([relative, true]);
        const copies = await Promise.all(direct.map((client) => client.readResource({ uri: file.uri })));
        for (const copy of copies) expect(copy.contents).toEqual(copies[0]!.contents);
      }
    }
  });

  it('takes a webhook on one replica; the others converge within one poll interval', async () => {
    const direct = await Promise.all(replicas.map((replica) => connect(replica.url)));
    expect(await Promise.all(direct.map(liveAt))).toEqual([firstCommit[0], firstCommit[0], firstCommit[0]]);
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v2') });
    const hook = await fetch(`${proxy.url}/hooks/git`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'live', ref: 'main' }),
    });
    expect([hook.status, await hook.json()]).toEqual([202, { triggered: ['live'] }]);
    const hooked = proxy.routed.at(-1)!.upstream;
    await until('the replica the webhook reached to serve the push', async () =>
      (await liveAt(direct[hooked]!)) === pushed ? true : undefined,
    );
    const others = [0, 1, 2].filter((i) => i !== hooked);
    // Their clocks have not moved and no webhook reached them: they still serve the first commit.
    expect(await Promise.all(others.map((i) => liveAt(direct[i]!)))).toEqual([
      firstCommit[0],
      firstCommit[0],
    ]);
    for (const i of others) replicas[i]!.clock.advance(POLL_MS);
    await until('every replica to serve the push', async () =>
      (await Promise.all(direct.map(liveAt))).every((commit) => commit === pushed) ? true : undefined,
    );
  });

  it('needs session affinity for 2025-11-25 sessions: another replica answers 404, and a new session recovers', async () => {
    const plain = await startRoundRobinProxy(replicas.map((replica) => replica.url));
    try {
      // Round robin sends initialize to one replica and the next request to another.
      const refused = await connect(`${plain.url}/mcp`, 'legacy').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SdkHttpError);
      expect((refused as SdkHttpError).status).toBe(404);
      expect((refused as SdkHttpError).message).toContain(SESSION_NOT_FOUND);
    } finally {
      await plain.close();
    }

    const sticky = await startRoundRobinProxy(
      replicas.map((replica) => replica.url),
      { sessionAffinity: true },
    );
    try {
      const host = await connect(`${sticky.url}/mcp`, 'legacy');
      const listed = (await new SkillsClient(host).list()).skills.map((skill) => skill.uri);
      expect(listed.length).toBe(9);
      const holder = sticky.routed[0]!.upstream;
      expect(sticky.routed.every((routed) => routed.upstream === holder)).toBe(true);
      // The replica holding the session leaves the rotation (a rollout): the session lands elsewhere.
      sticky.drop(holder);
      const lost = await new SkillsClient(host).list().catch((error: unknown) => error);
      expect(lost).toBeInstanceOf(SdkHttpError);
      expect([(lost as SdkHttpError).status, (lost as SdkHttpError).message]).toEqual([
        404,
        `Error POSTing to endpoint: ${JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: SESSION_NOT_FOUND }, id: null })}`,
      ]);
      // The client starts a new session, as the spec tells it to, and is served the same listing.
      const again = await connect(`${sticky.url}/mcp`, 'legacy');
      expect((await new SkillsClient(again).list()).skills.map((skill) => skill.uri)).toEqual(listed);
      expect(sticky.routed.at(-1)!.upstream).not.toBe(holder);
    } finally {
      await sticky.close();
    }
  });
});
