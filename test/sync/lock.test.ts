import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import {
  DataDirBusyError,
  LOCK_REFRESH_MS,
  LOCK_STALE_MS,
  lockDataDir,
  type LockHolder,
} from '../../src/sync/lock.ts';
import { manualClock } from '../helpers/clock.ts';

const dirs: string[] = [];
const dataDir = () => {
  const dir = tempDir('skillpin-lock-');
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const holderIn = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'lock'), 'utf8')) as LockHolder;
const busy = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the lock to be busy');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(DataDirBusyError);
      return error as DataDirBusyError;
    },
  );
/** A pid that no process has any more: a child that has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('the dataDir lock', () => {
  it('is touched every LOCK_REFRESH_MS while held, so that another host sees it alive', async () => {
    expect([LOCK_REFRESH_MS, LOCK_STALE_MS]).toEqual([10_000, 60_000]);
    const dir = dataDir();
    const clock = manualClock(Date.parse('2030-01-01T00:00:00.000Z'));
    const lock = await lockDataDir(dir, 'serve', { clock });
    const mtime = () => statSync(path.join(dir, 'lock')).mtime.toISOString();
    clock.advance(LOCK_REFRESH_MS - 1);
    expect(mtime()).not.toBe('2030-01-01T00:00:10.000Z');
    clock.advance(1);
    expect(mtime()).toBe('2030-01-01T00:00:10.000Z');
    clock.advance(LOCK_REFRESH_MS);
    expect(mtime()).toBe('2030-01-01T00:00:20.000Z');
    lock.release();
    expect(clock.pending()).toEqual([]);
  });

  it('names this process while held, refuses a second holder, and is gone once released', async () => {
    const dir = dataDir();
    const lock = await lockDataDir(dir, 'serve');
    expect(holderIn(dir)).toMatchObject({ pid: process.pid, host: os.hostname(), command: 'serve' });
    const error = await busy(lockDataDir(dir, 'sync'));
    expect(error.holder.pid).toBe(process.pid);
    expect(error.message).toMatch(
      new RegExp(`^dataDir .+ is in use by skillpin serve \\(pid ${process.pid}, since `),
    );
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    (await lockDataDir(dir, 'sync')).release();
  });

  it('takes over the lock of a process that is gone', async () => {
    const dir = dataDir();
    const dead: LockHolder = {
      pid: deadPid(),
      host: os.hostname(),
      command: 'serve',
      since: '2024-05-01T00:00:00.000Z',
    };
    writeFileSync(path.join(dir, 'lock'), JSON.stringify(dead));
    const lock = await lockDataDir(dir, 'sync');
    expect(holderIn(dir)).toMatchObject({ pid: process.pid, command: 'sync' });
    expect(readdirSync(dir)).toEqual(['lock']);
    lock.release();
  });

  it('takes over an unreadable lock file', async () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, 'lock'), '{"pid":');
    const lock = await lockDataDir(dir, 'serve');
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
  });

  it('refuses the lock of a live process and of another host, unless that one went untouched', async () => {
    const dir = dataDir();
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const live: LockHolder = { pid: child.pid!, host: os.hostname(), command: 'serve', since: 'then' };
      writeFileSync(path.join(dir, 'lock'), JSON.stringify(live));
      expect((await busy(lockDataDir(dir, 'sync'))).holder).toEqual(live);
      const remote: LockHolder = {
        pid: deadPid(),
        host: 'elsewhere.invalid',
        command: 'serve',
        since: 'then',
      };
      writeFileSync(path.join(dir, 'lock'), JSON.stringify(remote));
      const error = await busy(lockDataDir(dir, 'sync'));
      expect(error.message).toContain(`(pid ${remote.pid} on host elsewhere.invalid, since then)`);
      // Untouched for longer than LOCK_STALE_MS: its holder is gone.
      const old = new Date(Date.now() - LOCK_STALE_MS - 1000);
      utimesSync(path.join(dir, 'lock'), old, old);
      const lock = await lockDataDir(dir, 'sync');
      expect(holderIn(dir).pid).toBe(process.pid);
      lock.release();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('with a wait, gets the lock once its holder is gone', async () => {
    const dir = dataDir();
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const live: LockHolder = { pid: child.pid!, host: os.hostname(), command: 'serve', since: 'then' };
    writeFileSync(path.join(dir, 'lock'), JSON.stringify(live));
    let told: LockHolder | undefined;
    const lock = await lockDataDir(dir, 'sync', {
      waitMs: 30_000,
      retryMs: 20,
      onWait: (holder) => {
        told = holder;
        child.kill('SIGKILL');
      },
    });
    expect(told).toEqual(live);
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
  });

  it('never removes a lock another process took over after it', async () => {
    const dir = dataDir();
    const lock = await lockDataDir(dir, 'serve');
    const later: LockHolder = { pid: deadPid(), host: os.hostname(), command: 'sync', since: 'later' };
    writeFileSync(path.join(dir, 'lock'), JSON.stringify(later));
    lock.release();
    expect(existsSync(path.join(dir, 'lock'))).toBe(true);
  });
});
