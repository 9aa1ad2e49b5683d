import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import {
  connectHttp,
  connectStdio,
  startHttp,
  writeConfig,
  type HttpServerProcess,
} from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const SECRET = 'whsec-shared-4f1c9a';
/** Pushes while every process follows: each one must list every commit. */
const MOVES = 5;

interface Member {
  name: string;
  skills: SkillsClient;
  close(): Promise<void>;
}

describe('many processes on one dataDir (4 stdio servers and one HTTP server)', () => {
  let git: GitHttpServer;
  let proxy: FaultProxy;
  let repo: ReturnType<typeof pushableRepo>;
  let http: HttpServerProcess;
  let dataDir: string;
  const members: Member[] = [];
  const commits: string[] = [];
  const fetches = () => git.requests.filter((r) => r.fetch).length;
  const leaseOf = (id: string) =>
    JSON.parse(readFileSync(path.join(dataDir, 'leases', `${id}.json`), 'utf8')) as { pid: number };

  const currentIn = async (member: Member, source: string) => {
    const { skills } = await member.skills.list();
    return skills.find((entry) => entry.uri.startsWith(`skill://${source}/`))?.uri.split('/')[3];
  };
  /** Every live member lists `commit` for `source`, and reads its SKILL.md verified. */
  const allServe = async (source: string, commit: string, who = members) => {
    for (const member of who)
      await until(`${member.name} to list ${source}@${commit.slice(0, 8)}`, async () =>
        (await currentIn(member, source)) === commit ? true : undefined,
      );
    for (const member of who) {
      const { skill } = await member.skills.get(`skill://${source}/${commit}/alpha/SKILL.md`);
      const read = await member.skills.read(skill, 'SKILL.md');
      expect([member.name, read.verified]).toEqual([member.name, true]);
    }
  };

  beforeAll(async () => {
    const root = tempDir('skillpin-shared-');
    repo = pushableRepo(root, 'skills');
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') }));
    git = await startGitHttpServer({ root });
    proxy = await startFaultProxy(git.url);
    const url = `${proxy.url}/skills.git`;
    process.env['SKILLPIN_SHARED_SECRET'] = SECRET;
    const config = writeConfig({
      webhook: { secret: '${SKILLPIN_SHARED_SECRET}' },
      sources: [
        { id: 'live', url, ref: 'main', poll: '1s', keep: 2 },
        { id: 'hooked', url, ref: 'main', poll: '1h' },
      ],
    });
    dataDir = path.join(path.dirname(config), 'data');
    // The first one takes both leases; the others start beside it, one at a time (tsx on a busy machine).
    for (const n of [1, 2, 3, 4]) {
      const one = await connectStdio(config, 'legacy');
      members.push({ name: `stdio ${n}`, skills: new SkillsClient(one.client), close: one.close });
    }
    http = await startHttp(config, [], {}, 120_000);
    const client = await connectHttp(http.url, 'modern');
    members.push({ name: 'http', skills: new SkillsClient(client.client), close: client.close });
  }, 600_000);
  afterAll(async () => {
    await Promise.all(members.map((member) => member.close().catch(() => undefined)));
    await http?.stop();
    await proxy?.close();
    await git?.close();
  });

  it('every process lists every commit a moving branch gets, one fetch per change at the remote', async () => {
    await allServe('live', commits[0]!);
    const before = fetches();
    for (let i = 1; i <= MOVES; i++) {
      commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', `v${i}`) }));
      await allServe('live', commits.at(-1)!);
      // The commit before stays served (keep: 2): an entry a host holds keeps verifying in every process.
      for (const member of members) {
        const { skill } = await member.skills.get(`skill://live/${commits.at(-2)}/alpha/SKILL.md`);
        expect((await member.skills.read(skill, 'SKILL.md')).verified).toBe(true);
      }
    }
    expect(fetches() - before).toBe(MOVES);
    // Only the lease holder talks to the remote; the others picked up what it published.
    const holder = leaseOf('live').pid;
    const pids = readdirSync(path.join(dataDir, 'processes')).map((name) => Number(name.split('.').at(-3)));
    expect(pids).toHaveLength(5);
    expect(pids).toContain(holder);
    expect(holder).not.toBe(http.child.pid);
  }, 120_000);

  it('a webhook at a process that does not hold the lease reaches every process', async () => {
    const before = fetches();
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'hooked') }));
    const answer = await fetch(http.url.replace('/mcp', '/hooks/git'), {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'hooked', ref: 'main' }),
    });
    expect(answer.status).toBe(202);
    await allServe('hooked', commits.at(-1)!);
    await allServe('live', commits.at(-1)!);
    // One fetch for `hooked` (asked of its holder) and one for `live` (its poll): never one per process.
    expect(fetches() - before).toBe(2);
  }, 60_000);

  it('a holder killed with -9 in the middle of its sync: the lease passes on, nothing lost or half-written', async () => {
    const packDir = path.join(dataDir, 'repos', 'live.git', 'objects', 'pack');
    const killed = leaseOf('live').pid;
    // From here the remote answers its first bytes and then one a minute: the holder's next sync hangs in it.
    const seen = proxy.seen.length;
    proxy.setFault({ kind: 'drip', everyMs: 60_000, packOnly: true });
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'after the kill') }));
    await until('the holder to be in its sync', () =>
      proxy.seen.slice(seen).some((request) => request.method === 'POST'),
    );
    process.kill(killed, 'SIGKILL');
    proxy.setFault({ kind: 'pass' });
    const living = members.filter((member) => member.name !== 'stdio 1');
    await allServe('live', commits.at(-1)!, living);
    const taker = leaseOf('live').pid;
    expect(taker).not.toBe(killed);
    // Nothing half-written: no temporary pack, state.json whole and naming the new commit, its index file there.
    expect(readdirSync(packDir).filter((name) => name.startsWith('tmp_'))).toEqual([]);
    const state = JSON.parse(readFileSync(path.join(dataDir, 'state.json'), 'utf8'));
    expect([state.sources.live.current, state.sources.live.retained]).toEqual([
      commits.at(-1),
      [commits.at(-2), commits.at(-3)],
    ]);
    expect(existsSync(path.join(dataDir, 'index', 'live', `${commits.at(-1)}.json`))).toBe(true);
    // The killed process's file is gone once another looks (it names a pid that no longer runs).
    await until('the dead process to leave the list', () =>
      readdirSync(path.join(dataDir, 'processes')).every((name) => !name.includes(`.${killed}.`)),
    );
  }, 90_000);
});
