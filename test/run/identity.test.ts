import { describe, expect, it } from 'vitest';
import { parsePasswd, runIdentity } from '../../src/run/identity.ts';

const PASSWD = [
  'root:x:0:0:root:/root:/bin/bash',
  'runner:x:1200:1300::/home/runner:/bin/sh',
  'broken line',
  'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
].join('\n');
const passwd = () => PASSWD;

describe('runIdentity', () => {
  it('parses passwd lines into name, uid and primary gid, skipping what does not parse', () => {
    expect(parsePasswd(PASSWD)).toEqual([
      { name: 'root', uid: 0, gid: 0 },
      { name: 'runner', uid: 1200, gid: 1300 },
      { name: 'nobody', uid: 65534, gid: 65534 },
    ]);
  });

  it('as root without runs.user, scripts run as nobody', () => {
    expect(runIdentity(undefined, 0, passwd)).toEqual({
      state: 'other',
      user: { name: 'nobody', uid: 65534, gid: 65534 },
    });
  });

  it('as root, runs.user by name or by uid; a uid without an entry keeps its number as gid', () => {
    expect(runIdentity('runner', 0, passwd)).toEqual({
      state: 'other',
      user: { name: 'runner', uid: 1200, gid: 1300 },
    });
    expect(runIdentity('1200', 0, passwd)).toEqual({
      state: 'other',
      user: { name: 'runner', uid: 1200, gid: 1300 },
    });
    expect(runIdentity('4000', 0, passwd)).toEqual({
      state: 'other',
      user: { name: '4000', uid: 4000, gid: 4000 },
    });
  });

  it('not root: nothing changes without runs.user, the own user is the same, another cannot be had', () => {
    expect(runIdentity(undefined, 1200, passwd)).toEqual({ state: 'same' });
    expect(runIdentity('runner', 1200, passwd)).toEqual({ state: 'same' });
    expect(runIdentity('nobody', 1200, passwd)).toEqual({
      state: 'unavailable',
      detail: 'runs.user "nobody" is another user, and only root can start a process as another user',
    });
  });

  it('a name that is no user is unavailable, with the name', () => {
    expect(runIdentity('ghost', 0, passwd)).toEqual({
      state: 'unavailable',
      detail: 'runs.user "ghost" names no user in /etc/passwd',
    });
  });
});
