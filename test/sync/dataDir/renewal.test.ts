import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.ts';
import {
  HOLDER_REFRESH_MS,
  HOLDER_STALE_MS,
  type Holder,
  processStart,
} from '../../../src/sync/dataDir/lease.ts';
import { joinDataDir, leaseFile, type Membership } from '../../../src/sync/dataDir/membership.ts';
import { liveProcesses, processFile } from '../../../src/sync/dataDir/processes.ts';
import { manualClock } from '../../helpers/clock.ts';
import { capturingLogger } from '../../helpers/logs.ts';
import { writeConfig } from '../../helpers/server.ts';
import { until } from '../../helpers/until.ts';

const left: Membership[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const one of left.splice(0)) one.leave();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A running process of this host that is not skillpin, as a lease written by a stranger would name it. */
async function stranger(): Promise<Holder> {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' });
  children.push(child);
  const pid = child.pid!;
  const start = await until('sleep to start', () => processStart(pid));
  return { pid, host: os.hostname(), start, since: '2026-01-01T00:00:00.000Z', nonce: 'stranger' };
}

/** Sets `file`'s modification time (the holder's last renewal) to `ageMs` ago. */
const renewedAgo = (file: string, ageMs: number) => {
  const at = new Date(Date.now() - ageMs);
  utimesSync(file, at, at);
};

function member(logger = capturingLogger().logger, clock = manualClock()) {
  const config = loadConfig(writeConfig({ sources: [{ id: 'skills', path: '.', ref: 'main' }] }));
  const membership = joinDataDir(config, { command: 'serve', transport: 'http' }, logger, clock);
  left.push(membership);
  const file = leaseFile(membership.dataDir, 'skills');
  mkdirSync(path.dirname(file), { recursive: true });
  return { membership, clock, file };
}

describe('a source lease naming a live process that does not renew it', () => {
  it('is honoured while renewed within HOLDER_STALE_MS, then taken over and logged as lease-not-renewed', async () => {
    const { logger, lines } = capturingLogger();
    const { membership, file } = member(logger);
    const holder = await stranger();
    writeFileSync(file, `${JSON.stringify(holder)}\n`);
    renewedAgo(file, HOLDER_STALE_MS - 5_000);
    expect(membership.lease('skills')).toEqual({ ours: false, holder });
    expect(lines).toEqual([]);
    renewedAgo(file, HOLDER_STALE_MS + 1_000);
    expect(membership.lease('skills')).toEqual({ ours: true, from: holder, why: 'lease-not-renewed' });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ nonce: membership.holder.nonce });
    expect(membership.holds('skills')).toBe(true);
    expect(lines.map((line) => [line['level'], line['msg'], line['reason'], line['from']])).toEqual([
      [
        40,
        `took over the lease of source skills: its holder (pid ${holder.pid}) did not renew it for 60 s`,
        'lease-not-renewed',
        { pid: holder.pid, host: holder.host, since: holder.since },
      ],
    ]);
  });

  it('is no renewal when its time is set far in the future (touch -d): taken over', async () => {
    const { membership, file } = member();
    const holder = await stranger();
    writeFileSync(file, `${JSON.stringify(holder)}\n`);
    renewedAgo(file, -10 * HOLDER_STALE_MS);
    expect(membership.lease('skills')).toEqual({ ours: true, from: holder, why: 'lease-not-renewed' });
  });

  it('names a process file that is not renewed: it is not a live process, and its file is removed', async () => {
    const { membership } = member();
    const holder = await stranger();
    const file = processFile(membership.dataDir, holder);
    writeFileSync(
      file,
      JSON.stringify({ ...holder, command: 'serve', sources: {}, served: { skills: ['a'] } }),
    );
    renewedAgo(file, HOLDER_STALE_MS - 5_000);
    expect(liveProcesses(membership.dataDir).map((p) => p.pid)).toContain(holder.pid);
    renewedAgo(file, HOLDER_STALE_MS + 1_000);
    expect(liveProcesses(membership.dataDir).map((p) => p.pid)).not.toContain(holder.pid);
    expect(() => statSync(file)).toThrow('ENOENT');
  });
});

describe('a holder that renews', () => {
  it('touches its lease and its process file every HOLDER_REFRESH_MS, and writes a removed process file again', () => {
    const { membership, clock, file } = member();
    expect(membership.lease('skills').ours).toBe(true);
    const own = processFile(membership.dataDir, membership.holder);
    renewedAgo(file, 2 * HOLDER_STALE_MS);
    renewedAgo(own, 2 * HOLDER_STALE_MS);
    clock.advance(HOLDER_REFRESH_MS);
    for (const touched of [file, own]) expect(Date.now() - statSync(touched).mtimeMs).toBeLessThan(5_000);
    rmSync(own);
    clock.advance(HOLDER_REFRESH_MS);
    expect(JSON.parse(readFileSync(own, 'utf8'))).toMatchObject({
      pid: process.pid,
      nonce: membership.holder.nonce,
      command: 'serve',
    });
    expect(membership.holds('skills')).toBe(true);
  });
});

describe('HOLDER_STALE_MS', () => {
  it('is 60 s, renewed every 10 s: a holder misses five renewals before it is taken for gone', () => {
    expect([HOLDER_STALE_MS, HOLDER_REFRESH_MS]).toEqual([60_000, 10_000]);
  });
});
