import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunIdentity } from '../../src/run/identity.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { makeRepo } from '../helpers/repo.ts';
import { harness, SOURCE } from './harness.ts';

/** A script that tries what a hostile one would: the server's memory and environment, its own folder, TMPDIR. */
const PROBE = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const attempt = (what) => {
  try {
    what();
    return 'ok';
  } catch (error) {
    return error.code;
  }
};
const mem = attempt(() => {
  const fd = fs.openSync('/proc/' + process.ppid + '/mem', 'r');
  fs.closeSync(fd);
});
const environ = attempt(() => fs.readFileSync('/proc/' + process.ppid + '/environ'));
const ownFile = attempt(() => fs.readFileSync(path.join(__dirname, 'probe.js')));
const writeCwd = attempt(() => fs.writeFileSync(path.join(process.cwd(), 'x'), 'x'));
const tmp = attempt(() => fs.writeFileSync(path.join(process.env.TMPDIR, 'x'), 'x'));
process.stdout.write(
  JSON.stringify({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups(), mem, environ, ownFile, writeCwd, tmp, tmpdir: process.env.TMPDIR }),
);
`;

const SKILL = `---
name: probe
description: Tries to read its server's memory.
mcp-host:
  version: 1
  run:
    - script: scripts/probe.js
      interpreter: node
---
Run it.
`;

const notRoot = process.getuid?.() !== 0;

// The tests' temp dirs are private (0700): another user's files go under /tmp, as a server's would.
const shared = mkdtempSync('/tmp/skillpin-runuser-');
chmodSync(shared, 0o755);
afterAll(() => rmSync(shared, { recursive: true, force: true }));

async function probeRun(identity: RunIdentity) {
  const repo = makeRepo({ 'skills/probe/SKILL.md': SKILL, 'skills/probe/scripts/probe.js': PROBE });
  const ns = await namespaceOf(SOURCE, path.join(repo.dir, '.git'), repo.commit);
  const h = await harness({
    grants: [{ skill: 'skills/probe', script: 'scripts/probe.js', env: [] }],
    namespaces: [ns],
    identity,
    sharedDir: path.join(shared, 'run'),
    env: { PATH: process.env['PATH']! },
  });
  const args = { uri: `skill://${SOURCE}/${repo.commit}/skills/probe/SKILL.md`, script: 'scripts/probe.js' };
  const first = await h.run(args);
  expect(first.structuredContent?.['status']).toBe('confirmation-required');
  const ran = await h.run({ ...args, confirmToken: first.structuredContent!['confirmToken'] });
  await h.close();
  return ran;
}

describe('skill_run under another user', () => {
  it.skipIf(notRoot)(
    'runs a root server’s script as nobody: the server’s memory and environment are refused, its files read, its TMPDIR its own and removed',
    async () => {
      const ran = await probeRun({ state: 'other', user: { name: 'nobody', uid: 65534, gid: 65534 } });
      expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0, stderr: '' });
      const seen = JSON.parse(ran.structuredContent!['stdout'] as string) as Record<string, unknown>;
      expect(seen).toMatchObject({
        uid: 65534,
        gid: 65534,
        groups: [65534],
        mem: 'EACCES',
        environ: 'EACCES',
        ownFile: 'ok',
        writeCwd: 'EACCES',
        tmp: 'ok',
      });
      expect(existsSync(seen['tmpdir'] as string)).toBe(false);
    },
  );

  it.skipIf(notRoot)(
    'as the server’s own user (root) the same script reads the server’s memory: what the switch prevents',
    async () => {
      const ran = await probeRun({ state: 'same' });
      const seen = JSON.parse(ran.structuredContent!['stdout'] as string) as Record<string, unknown>;
      expect(seen).toMatchObject({ uid: 0, mem: 'ok', environ: 'ok' });
    },
  );

  it('refuses every run with run-user-unavailable when the configured user cannot be had', async () => {
    const ran = await probeRun({
      state: 'unavailable',
      detail: 'runs.user "ghost" names no user in /etc/passwd',
    });
    expect(ran.isError).toBe(true);
    expect(ran.structuredContent).toMatchObject({
      status: 'refused',
      code: 'run-user-unavailable',
      detail: 'runs.user "ghost" names no user in /etc/passwd',
    });
  });
});
