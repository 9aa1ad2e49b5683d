import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.ts';
import {
  type Holder,
  leftHere,
  newHolder,
  processStart,
  releaseLease,
  takeLease,
} from '../../../src/sync/dataDir/lease.ts';
import { joinDataDir, leaseFile, type Membership } from '../../../src/sync/dataDir/membership.ts';
import { openStateFile, type SourceState } from '../../../src/sync/dataDir/state.ts';
import { capturingLogger } from '../../helpers/logs.ts';
import { writeConfig } from '../../helpers/server.ts';
import { tempDir } from '../../helpers/temp.ts';
import { until } from '../../helpers/until.ts';

const left: Array<Holder | Membership> = [];
afterEach(() => {
  for (const one of left.splice(0)) 'leave' in one ? one.leave() : leftHere(one);
});
const holder = () => {
  const made = newHolder();
  left.push(made);
  return made;
};
/** A pid that no process has any more: a child that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;
const named = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Holder;
const COMMIT = 'a'.repeat(40);

describe('a source lease', () => {
  it('is taken with an atomic create naming pid, host and start time, and is ours again when asked again', () => {
    const file = path.join(tempDir('skillpin-lease-'), 'leases', 'skills.json');
    const me = holder();
    expect(takeLease(file, me)).toEqual({ ours: true });
    expect(named(file)).toEqual(me);
    expect(me).toMatchObject({ pid: process.pid, host: os.hostname(), start: processStart(process.pid) });
    expect(me.start).toMatch(/^\d+$/);
    expect(takeLease(file, me)).toEqual({ ours: true });
  });

  it('is refused while its holder lives, and released only by its holder', () => {
    const file = path.join(tempDir('skillpin-lease-'), 'skills.json');
    const [first, second] = [holder(), holder()];
    takeLease(file, first);
    expect(takeLease(file, second)).toEqual({ ours: false, holder: first });
    releaseLease(file, second);
    expect(named(file)).toEqual(first);
    releaseLease(file, first);
    expect(existsSync(file)).toBe(false);
    expect(takeLease(file, second)).toEqual({ ours: true });
  });

  it("is taken over from a holder whose pid is gone, and the takeover is logged with the holder's pid", () => {
    const config = loadConfig(writeConfig({ sources: [{ id: 'skills', path: '.', ref: 'main' }] }));
    const gone: Holder = {
      pid: deadPid(),
      host: os.hostname(),
      since: '2026-01-01T00:00:00.000Z',
      nonce: 'gone',
    };
    const file = leaseFile(path.resolve(config.dataDir), 'skills');
    takeLease(file, gone);
    const { logger, lines } = capturingLogger();
    const membership = joinDataDir(config, { command: 'serve', transport: 'stdio' }, logger);
    left.push(membership);
    expect(membership.lease('skills')).toEqual({ ours: true, from: gone, why: 'lease-holder-gone' });
    expect(named(file)).toMatchObject({ pid: process.pid, nonce: membership.holder.nonce, command: 'serve' });
    expect(lines.map((line) => [line['msg'], line['source'], line['reason'], line['from']])).toEqual([
      [
        `took over the lease of source skills: its holder (pid ${gone.pid}) is gone`,
        'skills',
        'lease-holder-gone',
        { pid: gone.pid, host: os.hostname(), since: gone.since },
      ],
    ]);
  });

  it('is taken over from a live pid whose start time differs (the pid was reused), not from one whose matches', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid!;
      const start = await until('the child to start', () => processStart(pid));
      const file = path.join(tempDir('skillpin-lease-'), 'skills.json');
      const running: Holder = {
        pid,
        host: os.hostname(),
        start,
        since: '2026-01-01T00:00:00.000Z',
        nonce: 'x',
      };
      takeLease(file, running);
      const me = holder();
      expect(takeLease(file, me)).toEqual({ ours: false, holder: running });
      const reused = { ...running, start: String(Number(start) - 1) };
      writeFileSync(file, JSON.stringify(reused));
      expect(takeLease(file, me)).toEqual({ ours: true, from: reused, why: 'lease-holder-gone' });
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('state.json shared by many writers', () => {
  it('keeps every writer entry under 2 x 100 interleaved merges (read-modify-write under the state mutex)', async () => {
    const dataDir = tempDir('skillpin-state-');
    const state = openStateFile(dataDir);
    const [a, b] = [holder(), holder()];
    // Two state files (two processes' views), each merging only its own source.
    const other = openStateFile(dataDir);
    const entry = (n: number): SourceState => ({ current: COMMIT, retained: [], lastSync: `t${n}` });
    await Promise.all(
      Array.from({ length: 100 }, (_, n) => [
        state.merge(a, { one: entry(n) }),
        other.merge(b, { two: entry(n) }),
      ]).flat(),
    );
    const read = await state.read();
    expect(read).toEqual({
      found: 'state',
      state: { version: 1, sources: { one: entry(99), two: entry(99) } },
    });
    expect(existsSync(path.join(dataDir, 'state.mutex'))).toBe(false);
  });
});

describe('two configs on one dataDir', () => {
  it('share a source id defined alike, and refuse one whose repository differs, naming both configs', () => {
    const dataDir = path.join(tempDir('skillpin-shared-'), 'data');
    const first = writeConfig({ dataDir, sources: [{ id: 'skills', path: '/srv/one', ref: 'main' }] });
    const alike = writeConfig({ dataDir, sources: [{ id: 'skills', path: '/srv/one', ref: 'main' }] });
    const other = writeConfig({ dataDir, sources: [{ id: 'skills', path: '/srv/two', ref: 'main' }] });
    const { logger } = capturingLogger();
    const one = joinDataDir(loadConfig(first), { command: 'serve', transport: 'http' }, logger);
    left.push(one);
    // Alike: shared (no refusal); it leaves again, so the refusal below can only name the first.
    joinDataDir(loadConfig(alike), { command: 'serve', transport: 'stdio' }, logger).leave();
    expect(() => joinDataDir(loadConfig(other), { command: 'sync' }, logger)).toThrow(
      `dataDir ${dataDir} is shared with skillpin serve (pid ${process.pid}, config ${first}), whose source ` +
        `"skills" is /srv/one (ref main); in ${other} it is /srv/two (ref main). Processes on one dataDir share a ` +
        'source id only when it names the same repository, ref or commit, paths and verification: give one of ' +
        'them another id, or another dataDir',
    );
  });
});
