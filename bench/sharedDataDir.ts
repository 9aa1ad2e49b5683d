/**
 * Many processes on one dataDir: a second stdio server's time to first listing beside a first one (against the
 * first's); the remote's requests per minute with 1 and with 5 processes following the same sources (1 s poll);
 * push-to-listing latency in each of 5 processes (4 stdio, 1 HTTP), by poll and by a webhook at the HTTP server
 * (which does not hold the lease). Usage: npx tsx bench/sharedDataDir.ts [pushes=5] [idleSeconds=20]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { connectHttp, connectStdio, startHttp, writeConfig } from '../test/helpers/server.ts';

const pushes = Number(process.argv[2] ?? '5');
const idleSeconds = Number(process.argv[3] ?? '20');
const secret = 'bench-secret';
process.env['BENCH_SECRET'] = secret;
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-shared-bench-'));
const repo = pushableRepo(root, 'skills');
repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') });
const git = await startGitHttpServer({ root });
const config = writeConfig({
  webhook: { secret: '${BENCH_SECRET}' },
  sources: [
    { id: 'polled', url: git.urlFor('skills.git'), ref: 'main', poll: '1s' },
    { id: 'hooked', url: git.urlFor('skills.git'), ref: 'main', poll: '1h' },
  ],
});

const commitIn = async (skills: SkillsClient, source: string) =>
  (await skills.list()).skills.find((s) => s.uri.startsWith(`skill://${source}/`))?.uri.split('/')[3];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a stdio server; resolves with its client and the time from spawn to a listing naming both sources. */
async function stdioServer() {
  const started = performance.now();
  const { client, close } = await connectStdio(config, 'legacy');
  const skills = new SkillsClient(client);
  while ((await commitIn(skills, 'polled')) === undefined || (await commitIn(skills, 'hooked')) === undefined)
    await pause(10);
  return { skills, close, firstListMs: performance.now() - started };
}

/** Remote requests over `idleSeconds` with nothing pushed, per minute. */
async function requestsPerMinute(): Promise<number> {
  const before = git.requests.length;
  await pause(idleSeconds * 1000);
  return ((git.requests.length - before) * 60) / idleSeconds;
}

const first = await stdioServer();
const alone = await requestsPerMinute();
const second = await stdioServer();
const others = [second, await stdioServer(), await stdioServer()];
const http = await startHttp(config, [], {}, 120_000);
const httpClient = await connectHttp(http.url, 'modern');
const all = [first.skills, ...others.map((o) => o.skills), new SkillsClient(httpClient.client)];
const five = await requestsPerMinute();

/** Pushes, runs `after`, and returns when each of the 5 processes listed the new commit (ms after the push). */
async function latencies(source: string, after: () => Promise<void>): Promise<number[]> {
  const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `${source} ${Date.now()}`) });
  const started = performance.now();
  await after();
  return Promise.all(
    all.map(async (skills) => {
      while ((await commitIn(skills, source)) !== commit) await pause(10);
      return performance.now() - started;
    }),
  );
}
const polled: number[] = [];
const hooked: number[] = [];
for (let i = 0; i < pushes; i++) {
  polled.push(...(await latencies('polled', async () => undefined)));
  hooked.push(
    ...(await latencies('hooked', async () => {
      await fetch(http.url.replace('/mcp', '/hooks/git'), {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'hooked' }),
      });
    })),
  );
}
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (values: number[]) =>
  `p50 ${p50(values).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms`;
console.log(
  `time to first listing: first stdio server ${first.firstListMs.toFixed(0)} ms (fetches), second beside it ${second.firstListMs.toFixed(0)} ms (${(second.firstListMs / first.firstListMs).toFixed(2)}x)`,
);
console.log(
  `remote requests per minute, idle, 2 sources (1 s and 1 h poll): 1 process ${alone.toFixed(0)}, 5 processes ${five.toFixed(0)}`,
);
console.log(`push to listed in each of 5 processes, ${pushes} pushes (${pushes * 5} samples each):`);
console.log(`  poll every 1s: ${fmt(polled)}`);
console.log(`  webhook at the HTTP server (not the lease holder): ${fmt(hooked)}`);
await Promise.all([first, ...others].map((o) => o.close()));
await httpClient.close();
await http.stop();
await git.close();
process.exit(0);
