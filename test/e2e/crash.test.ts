import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { startFaultProxy } from '../helpers/faultProxy.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { connectHttp, startHttp, writeConfig } from '../helpers/server.ts';

/** Lists and verifies every file of every listed skill; returns the served commit of `source`. */
async function verifyAll(url: string): Promise<string | undefined> {
  const { client, close } = await connectHttp(url, 'modern');
  try {
    const skills = new SkillsClient(client);
    const { skills: entries } = await skills.list();
    for (const entry of entries) {
      for (const resource of entry.resources as Array<{ uri: string }>)
        expect((await skills.read(entry, resource.uri)).verified).toBe(true);
    }
    return entries[0]?.uri.split('/')[3];
  } finally {
    await close();
  }
}

describe('kill -9 during a sync', () => {
  let git: GitHttpServer;
  let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
  let repo: ReturnType<typeof pushableRepo>;
  let config: string;
  beforeAll(async () => {
    const root = tempDir('skillpin-crash-');
    repo = pushableRepo(root, 'skills');
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'start') });
    git = await startGitHttpServer({ root });
    proxy = await startFaultProxy(git.url);
    config = writeConfig({
      sync: { timeout: '2s' },
      sources: [{ id: 'skills', url: `${proxy.url}/skills.git`, ref: 'main', poll: '1s', keep: 1 }],
    });
  });
  afterAll(async () => {
    await proxy.close();
    await git.close();
  });

  it('loses nothing that was served: a restart without network serves a verified catalog at once', async () => {
    const served = new Set<string>();
    for (const [round, delayMs] of [0, 150, 400, 700, 1100].entries()) {
      proxy.setFault({ kind: 'pass' });
      const online = await startHttp(config);
      await waitReady(online.url);
      const before = await verifyAll(online.url);
      served.add(before!);
      const files = Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [
          `alpha/ref/r${round}-${i}.md`,
          `round ${round} file ${i}\n`.repeat(50),
        ]),
      );
      served.add(repo.push({ ...files, 'alpha/SKILL.md': skillMd('alpha', `round ${round}`) }));
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      online.child.kill('SIGKILL');
      await online.stop();

      proxy.setFault({ kind: 'status', status: 503 });
      const offline = await startHttp(config);
      const after = await verifyAll(offline.url);
      await offline.stop();
      expect(served).toContain(after);
    }
    // Ten server starts: slow on a busy machine.
  }, 120_000);

  it('a torn state.json with the remote down still serves a verified catalog, rebuilt from dataDir', async () => {
    proxy.setFault({ kind: 'pass' });
    const online = await startHttp(config);
    await waitReady(online.url);
    const served = await verifyAll(online.url);
    await online.stop();
    const stateFile = path.join(path.dirname(config), 'data', 'state.json');
    writeFileSync(stateFile, readFileSync(stateFile, 'utf8').slice(0, 40));
    proxy.setFault({ kind: 'status', status: 503 });
    const offline = await startHttp(config);
    const after = await verifyAll(offline.url);
    await offline.stop();
    expect(after).toBe(served);
    expect(offline.stderr()).toContain(
      'state.json is corrupt: rebuilding it from the index files and pins in dataDir',
    );
  });
});
