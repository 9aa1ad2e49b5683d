/**
 * Scrape cost: `GET /metrics` of the built server (`npm run build` first) serving the synthetic catalog with
 * http.metrics on, against `GET /healthz` (the same HTTP path through Host checks, routing and logging, with a
 * tiny body) and `GET /status` (the same sources' report as JSON), in the same run: requests alternate A B C A B C,
 * one at a time over a kept-alive connection, after MCP traffic has filled the request histograms.
 * Usage: npx tsx bench/metrics.ts [skills=1000] [filesPerSkill=5] [scrapes=300]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { stringify } from 'yaml';
import { syntheticRepo } from './synthetic.ts';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const workDir = path.join(projectRoot, '.skillpin', 'bench');
const [skills = '1000', perSkill = '5', scrapes = '300'] = process.argv.slice(2);
const bin = path.join(projectRoot, 'bin', 'skillpin.js');
if (!existsSync(path.join(projectRoot, 'dist', 'cli.cjs'))) throw new Error('run `npm run build` first');

const repo = syntheticRepo(workDir, Number(skills), Number(perSkill));
const runDir = path.join(workDir, 'metrics');
rmSync(runDir, { recursive: true, force: true });
mkdirSync(runDir, { recursive: true });
const config = path.join(runDir, 'skillpin.yaml');
writeFileSync(
  config,
  stringify({
    dataDir: path.join(runDir, 'data'),
    http: { metrics: true },
    sources: [{ id: 'bench', path: repo.gitdir, commit: repo.base, paths: ['skills'] }],
  }),
);

const child = spawn(process.execPath, [bin, 'serve', '--config', config, '--http', '127.0.0.1:0'], {
  stdio: ['ignore', 'ignore', 'pipe'],
});
const url = await new Promise<string>((resolve, reject) => {
  let output = '';
  const timer = setTimeout(() => reject(new Error(`no URL in 120 s:\n${output}`)), 120_000);
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
    if (match !== null) {
      clearTimeout(timer);
      resolve(match[1]!);
    }
  });
});
const base = new URL(url).origin;

try {
  // Traffic first, so the request histograms hold series for the methods a host uses.
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const catalog = new SkillsClient(client);
  const { skills: entries } = await catalog.list();
  for (const entry of entries.slice(0, 50)) await catalog.get(entry.uri);
  await client.close();

  const paths = ['/metrics', '/healthz', '/status'] as const;
  const times = new Map<string, number[]>(paths.map((p) => [p, []]));
  const bytes = new Map<string, number>();
  for (let i = 0; i < Number(scrapes) + 20; i++) {
    for (const p of paths) {
      const started = performance.now();
      const body = await (await fetch(`${base}${p}`)).arrayBuffer();
      const ms = performance.now() - started;
      // The first 20 rounds warm the JIT and the connection.
      if (i >= 20) times.get(p)!.push(ms);
      bytes.set(p, body.byteLength);
    }
  }
  const at = (values: number[], q: number) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length * q)]!;
  const median = (p: string) => at(times.get(p)!, 0.5);
  console.log(
    `metrics bench: ${entries.length} skills x ${perSkill} files, ${scrapes} requests per path, alternating; ` +
      'latency from request to the whole body, one at a time',
  );
  console.log('  path        p50 ms   p99 ms   bytes   p50 vs /metrics');
  for (const p of paths)
    console.log(
      `  ${p.padEnd(10)} ${median(p).toFixed(2).padStart(7)} ${at(times.get(p)!, 0.99).toFixed(2).padStart(8)} ` +
        `${String(bytes.get(p)).padStart(7)}   ${p === '/metrics' ? '' : `${(median('/metrics') / median(p)).toFixed(2)}x`}`,
    );
} finally {
  child.kill('SIGTERM');
}
