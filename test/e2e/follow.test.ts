import { createHmac } from 'node:crypto';
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { SkillsClient, type Skill } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import type { StatusReport } from '../../src/shared/status.ts';
import { until } from '../helpers/until.ts';

const SECRET = 'whsec-test-5b1e0c';

describe('following a branch that CI pushes to', () => {
  let git: GitHttpServer;
  let server: InProcessServer;
  let repo: ReturnType<typeof pushableRepo>;
  let client: Client;
  let skills: SkillsClient;
  let close: () => Promise<void>;
  let changes = 0;
  const commits: string[] = [];
  const hookUrl = () => server.url.replace('/mcp', '/hooks/git');

  const currentOf = async (source: string) => {
    const { skills: entries } = await skills.list();
    return entries.find((entry) => entry.uri.startsWith(`skill://${source}/`))?.uri.split('/')[3];
  };

  beforeAll(async () => {
    const root = tempDir('skillpin-follow-');
    repo = pushableRepo(root, 'skills');
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v1'), 'alpha/guide.md': 'guide v1\n' }));
    git = await startGitHttpServer({ root });
    const url = git.urlFor('skills.git');
    server = await serveInProcess(
      writeConfig({
        webhook: { secret: '${SKILLPIN_WEBHOOK_SECRET}' },
        sources: [
          { id: 'live', url, ref: 'main', poll: '1s', keep: 2 },
          { id: 'hooked', url, ref: 'main', poll: '1h' },
        ],
      }),
      { env: { SKILLPIN_WEBHOOK_SECRET: SECRET } },
    );
    await waitReady(server.url);
    ({ client, close } = await connectHttp(server.url, 'legacy'));
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      changes++;
    });
    skills = new SkillsClient(client);
  });
  afterAll(async () => {
    await close();
    await server.stop();
    await git.close();
  });

  it('shows each push within a poll while a held entry of the first commit keeps verifying', async () => {
    const held: Skill = (await skills.get(`skill://live/${commits[0]}/alpha/SKILL.md`)).skill;
    for (let i = 2; i <= 3; i++) {
      commits.push(
        repo.push({ 'alpha/SKILL.md': skillMd('alpha', `v${i}`), 'alpha/guide.md': `guide v${i}\n` }),
      );
      await until(`push ${i} to be listed`, async () =>
        (await currentOf('live')) === commits.at(-1) ? true : undefined,
      );
      for (const file of ['SKILL.md', 'guide.md'])
        expect((await skills.read(held, file)).verified).toBe(true);
    }
    await until('list_changed notifications', async () => (changes >= 2 ? true : undefined));
  });

  it('stops serving a commit once it falls out of retention', async () => {
    const first = (await skills.get(`skill://live/${commits[1]}/alpha/SKILL.md`)).skill;
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v4') }));
    await until('push 4 to be listed', async () =>
      (await currentOf('live')) === commits.at(-1) ? true : undefined,
    );
    const error = await client
      .readResource({ uri: `skill://live/${commits[0]}/alpha/SKILL.md` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
    expect((error as ProtocolError).message).toBe(
      `skill://live/${commits[0]}/alpha/SKILL.md: source "live" does not serve commit ${commits[0]}`,
    );
    expect((await skills.read(first, 'guide.md')).verified).toBe(true);
  });

  const post = (headers: Record<string, string>, body: string) =>
    fetch(hookUrl(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const githubPush = () =>
    JSON.stringify({
      ref: 'refs/heads/main',
      repository: { clone_url: git.urlFor('skills.git'), default_branch: 'main' },
    });
  const sign = (body: string, secret = SECRET) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

  const statusOf = async (source: string) => {
    const report = (await (await fetch(server.url.replace('/mcp', '/status'))).json()) as StatusReport;
    return report.sources.find((s) => s.id === source)!;
  };

  it('refuses webhooks with a bad or missing signature, and syncs nothing', async () => {
    const before = await statusOf('hooked');
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'refused hooks') });
    const body = githubPush();
    expect(
      (await post({ 'x-github-event': 'push', 'x-hub-signature-256': sign(body, 'wrong') }, body)).status,
    ).toBe(401);
    expect((await post({ 'x-github-event': 'push' }, body)).status).toBe(401);
    expect((await post({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong' }, body)).status).toBe(401);
    expect((await post({ authorization: 'Bearer wrong' }, JSON.stringify({ source: 'hooked' }))).status).toBe(
      401,
    );
    expect((await post({ authorization: `Bearer ${SECRET}` }, 'x'.repeat(2 * 1024 * 1024))).status).toBe(413);
    // An accepted hook starts its sync before it answers, and a sync records lastSync when it ends: a source
    // neither syncing nor with a new lastSync was not triggered. No waiting needed to see that.
    const after = await statusOf('hooked');
    expect([after.syncing, after.lastSync, after.current?.commit]).toEqual([
      false,
      before.lastSync,
      before.current?.commit,
    ]);
  });

  it('syncs at once on a signed GitHub push, a GitLab push and a generic event', async () => {
    const body = githubPush();
    let response = await post({ 'x-github-event': 'push', 'x-hub-signature-256': sign(body) }, body);
    expect([response.status, await response.json()]).toEqual([202, { triggered: ['live', 'hooked'] }]);
    let pushed = await until('the hooked source to move', async () => {
      const at = await currentOf('hooked');
      return at !== undefined && at === (await currentOf('live')) ? at : undefined;
    });

    pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'gitlab') });
    const gitlab = JSON.stringify({
      ref: 'refs/heads/main',
      project: { git_http_url: git.urlFor('skills.git'), default_branch: 'main' },
    });
    response = await post({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': SECRET }, gitlab);
    expect([response.status, await response.json()]).toEqual([202, { triggered: ['live', 'hooked'] }]);
    await until('the GitLab push to show', async () =>
      (await currentOf('hooked')) === pushed ? true : undefined,
    );

    pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'generic') });
    response = await post(
      { authorization: `Bearer ${SECRET}` },
      JSON.stringify({ source: 'hooked', ref: 'main' }),
    );
    expect([response.status, await response.json()]).toEqual([202, { triggered: ['hooked'] }]);
    await until('the generic event to show', async () =>
      (await currentOf('hooked')) === pushed ? true : undefined,
    );
  });
});
