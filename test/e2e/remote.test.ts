import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { fixture } from '../helpers/fixtures.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { waitReady } from '../helpers/ready.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const TOKEN = 'ghp_test_9c1e44d0aa7b';

describe('remote sources over smart HTTP with a token', () => {
  let git: GitHttpServer;
  let server: InProcessServer;
  let configFile: string;
  beforeAll(async () => {
    const root = tempDir('skillpin-remote-e2e-');
    spawnSync('git', ['clone', '--quiet', '--bare', catalog.gitdir, path.join(root, 'catalog.git')]);
    git = await startGitHttpServer({ root, auth: { username: 'x-access-token', password: TOKEN } });
    configFile = writeConfig({
      sources: [
        {
          id: 'pinned',
          url: git.urlFor('catalog.git'),
          commit: c1,
          paths: ['skills'],
          token: '${SKILLPIN_TEST_TOKEN}',
        },
        {
          id: 'tracking',
          url: git.urlFor('catalog.git'),
          ref: 'main',
          paths: ['skills'],
          token: '${SKILLPIN_TEST_TOKEN}',
        },
        { id: 'refused', url: git.urlFor('catalog.git'), ref: 'main', token: '${SKILLPIN_WRONG_TOKEN}' },
      ],
    });
    server = await serveInProcess(configFile, {
      env: { SKILLPIN_TEST_TOKEN: TOKEN, SKILLPIN_WRONG_TOKEN: 'not-the-token' },
    });
    // Remote sources join once their first sync lands; the port is open before that.
    await waitReady(server.url);
  });
  afterAll(async () => {
    await server.stop();
    await git.close();
  });

  it('fetches the pinned commit and the branch tip, and serves verified bytes', async () => {
    const { client, close } = await connectHttp(server.url, 'modern');
    const skills = new SkillsClient(client);
    const { skills: entries } = await skills.list();
    expect(new Set(entries.map((e) => e.uri.split('/').slice(2, 4).join('@')))).toEqual(
      new Set([`pinned@${c1}`, `tracking@${c2}`]),
    );
    for (const entry of entries) {
      for (const resource of entry.resources as Array<{ uri: string }>)
        expect((await skills.read(entry, resource.uri)).verified).toBe(true);
    }
    // Provenance names the repository by its URL (a listing page once per namespace, skills/get on the entry).
    const { skill } = await skills.get(entries[0]!.uri);
    expect(skill._meta?.['dev.skillpin/repository']).toBe(git.urlFor('catalog.git'));
    await close();
  });

  it('reports the refused token as source-auth-failed', async () => {
    const health = (await (await fetch(server.url.replace('/mcp', '/healthz'))).json()) as {
      failures: unknown;
    };
    expect(health.failures).toEqual([{ id: 'refused', reason: 'source-auth-failed' }]);
  });

  it('never writes the token to the data folder, the config or the logs', () => {
    const dataDir = path.join(path.dirname(configFile), 'data');
    for (const secret of [TOKEN, 'not-the-token']) {
      expect(
        spawnSync('grep', ['-r', '-l', '--binary-files=text', secret, path.dirname(configFile)]).status,
      ).toBe(1);
      expect(server.logs()).not.toContain(secret);
    }
    // The refused source has an empty store (listing its refs needs one): nothing of it was written there.
    expect(
      spawnSync('ls', [path.join(dataDir, 'repos')], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean),
    ).toEqual(['pinned.git', 'refused.git', 'tracking.git']);
  });
});
