import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { statusReport } from '../../../src/commands/status.ts';
import { loadConfig } from '../../../src/config/index.ts';
import { INDEX_FILE_MAX_BYTES, indexStore } from '../../../src/index/store.ts';
import type { FileRefusedError } from '../../../src/shared/boundedRead.ts';
import { type DamagedFile, LEASE_FILE_MAX_BYTES } from '../../../src/sync/dataDir/lease.ts';
import { joinDataDir, leaseFile, type Membership } from '../../../src/sync/dataDir/membership.ts';
import { liveProcesses, PROCESS_FILE_MAX_BYTES } from '../../../src/sync/dataDir/processes.ts';
import { openStateFile, STATE_FILE_MAX_BYTES } from '../../../src/sync/dataDir/state.ts';
import { capturingLogger } from '../../helpers/logs.ts';
import { writeConfig } from '../../helpers/server.ts';

const MB300 = 300 * 1024 * 1024;
const left: Membership[] = [];
afterEach(() => {
  for (const one of left.splice(0)) one.leave();
});

/** A sparse file of 300 MB at `file`: no disk used, and far past every bound of the dataDir. */
function huge(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '');
  truncateSync(file, MB300);
  return file;
}

const oversized = (max: number) =>
  `${MB300} bytes, more than the ${max} bytes such a file may have; not read`;

function setUp() {
  const config = loadConfig(writeConfig({ sources: [{ id: 'skills', path: '.', ref: 'main' }] }));
  return { config, dataDir: path.resolve(config.dataDir) };
}

describe('a damaged file of the dataDir', () => {
  it('bounds: a lease 64 KiB, a process file 16 MiB, state.json 64 MiB, an index file 256 MiB', () => {
    expect([
      LEASE_FILE_MAX_BYTES,
      PROCESS_FILE_MAX_BYTES,
      STATE_FILE_MAX_BYTES,
      INDEX_FILE_MAX_BYTES,
    ]).toEqual([64 * 1024, 16 * 1024 * 1024, 64 * 1024 * 1024, 256 * 1024 * 1024]);
  });

  it('a 300 MB lease is not read: it is taken over (replaced by ours) and the takeover logged with its reason', () => {
    const { config, dataDir } = setUp();
    const file = huge(leaseFile(dataDir, 'skills'));
    const { logger, lines } = capturingLogger();
    const membership = joinDataDir(config, { command: 'serve', transport: 'http' }, logger);
    left.push(membership);
    const damaged = { file, reason: 'datadir-file-oversized', detail: oversized(LEASE_FILE_MAX_BYTES) };
    expect(membership.lease('skills')).toEqual({ ours: true, damaged });
    expect(statSync(file).size).toBeLessThan(1024);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ nonce: membership.holder.nonce });
    expect(lines.map((line) => [line['msg'], line['reason'], line['file']])).toEqual([
      [
        `took over the lease of source skills: its file was damaged (${oversized(LEASE_FILE_MAX_BYTES)})`,
        'datadir-file-oversized',
        file,
      ],
    ]);
  });

  it('a 300 MB process file and a FIFO in processes/ are reported, not read, and left; the live process is listed', () => {
    const { config, dataDir } = setUp();
    const big = huge(path.join(dataDir, 'processes', 'evil.1.x.json'));
    const fifo = path.join(dataDir, 'processes', 'fifo.2.y.json');
    execFileSync('mkfifo', [fifo]);
    const { logger, lines } = capturingLogger();
    const membership = joinDataDir(config, { command: 'serve', transport: 'http' }, logger);
    left.push(membership);
    const told: DamagedFile[] = [];
    const live = liveProcesses(dataDir, (d) => told.push(d));
    expect(live.map((p) => p.nonce)).toEqual([membership.holder.nonce]);
    expect(told.sort((a, b) => a.file.localeCompare(b.file))).toEqual([
      { file: big, reason: 'datadir-file-oversized', detail: oversized(PROCESS_FILE_MAX_BYTES) },
      { file: fifo, reason: 'datadir-file-not-regular', detail: 'not a regular file; not read' },
    ]);
    expect(statSync(big).size).toBe(MB300);
    // The membership's own look (at join, and each sync) logs each once.
    membership.servedElsewhere('skills');
    expect(lines.map((line) => [line['reason'], line['file']]).sort()).toEqual([
      ['datadir-file-not-regular', fifo],
      ['datadir-file-oversized', big],
    ]);
  });

  it('a 300 MB state.json is corrupt with reason datadir-file-oversized (rebuilt by the next write)', async () => {
    const { dataDir } = setUp();
    huge(path.join(dataDir, 'state.json'));
    expect(await openStateFile(dataDir).read()).toEqual({
      found: 'corrupt',
      state: { version: 1, sources: {} },
      reason: 'datadir-file-oversized',
      detail: oversized(STATE_FILE_MAX_BYTES),
    });
  });

  it('skillpin status lists every damaged file of the dataDir by its path inside it, with its reason', async () => {
    const { config, dataDir } = setUp();
    huge(path.join(dataDir, 'state.json'));
    huge(path.join(dataDir, 'processes', 'evil.1.x.json'));
    huge(leaseFile(dataDir, 'skills'));
    const report = await statusReport(config);
    expect(report.damaged?.sort((a, b) => a.file.localeCompare(b.file))).toEqual([
      {
        file: 'leases/skills.json',
        reason: 'datadir-file-oversized',
        detail: oversized(LEASE_FILE_MAX_BYTES),
      },
      {
        file: 'processes/evil.1.x.json',
        reason: 'datadir-file-oversized',
        detail: oversized(PROCESS_FILE_MAX_BYTES),
      },
      { file: 'state.json', reason: 'datadir-file-oversized', detail: oversized(STATE_FILE_MAX_BYTES) },
    ]);
    expect(report.processes).toEqual([]);
  });

  it('a 300 MB index file is not read: load finds none (it is rebuilt) and the refusal is told', async () => {
    const { dataDir } = setUp();
    const commit = 'a'.repeat(40);
    const file = huge(path.join(dataDir, 'index', 'skills', `${commit}.json`));
    const refused: FileRefusedError[] = [];
    const store = indexStore(path.dirname(file), (error) => refused.push(error));
    expect(await store.load(commit, { paths: [], strictNames: false })).toBeUndefined();
    expect(refused.map((e) => [e.file, e.reason, e.detail])).toEqual([
      [file, 'datadir-file-oversized', oversized(INDEX_FILE_MAX_BYTES)],
    ]);
  });
});
