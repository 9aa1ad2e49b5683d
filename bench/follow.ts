/**
 * Push-to-listing latency: how long after `git push` a new commit shows in skills/list, with a 1-second poll
 * and with a webhook (generic event), against the real server over loopback. Usage: npx tsx bench/follow.ts [pushes=5]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { connectHttp, startHttp, writeConfig } from '../test/helpers/server.ts';

const pushes = Number(process.argv[2] ?? '5');
const secret = 'bench-secret';
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-follow-bench-'));
const repo = pushableRepo(root, 'skills');
repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') });
const git = await startGitHttpServer({ root });
const server = await startHttp(
  writeConfig({
    webhook: { secret: '${BENCH_SECRET}' },
    sources: [
      { id: 'polled', url: git.urlFor('skills.git'), ref: 'main', poll: '1s' },
      { id: 'hooked', url: git.urlFor('skills.git'), ref: 'main', poll: '1h' },
    ],
  }),
  [],
  { BENCH_SECRET: secret },
);
const { client, close } = await connectHttp(server.url, 'modern');
const skills = new SkillsClient(client);
const commitOf = async (source: string) =>
  (await skills.list()).skills.find((s) => s.uri.startsWith(`skill://${source}/`))?.uri.split('/')[3];

async function latency(source: string, afterPush: () => Promise<void>): Promise<number> {
  const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `${source} ${Date.now()}`) });
  const started = performance.now();
  await afterPush();
  while ((await commitOf(source)) !== commit) await new Promise((resolve) => setTimeout(resolve, 10));
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const polled: number[] = [];
const hooked: number[] = [];
for (let i = 0; i < pushes; i++) {
  polled.push(await latency('polled', async () => undefined));
  hooked.push(
    await latency('hooked', async () => {
      await fetch(server.url.replace('/mcp', '/hooks/git'), {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ source: 'hooked' }),
      });
    }),
  );
}
console.log(`push-to-listing latency over loopback, ${pushes} pushes each (median, min-max):`);
console.log(
  `  poll every 1s: ${median(polled).toFixed(0)} ms (${Math.min(...polled).toFixed(0)}-${Math.max(...polled).toFixed(0)})`,
);
console.log(
  `  webhook:       ${median(hooked).toFixed(0)} ms (${Math.min(...hooked).toFixed(0)}-${Math.max(...hooked).toFixed(0)})`,
);
await close();
await server.stop();
await git.close();
