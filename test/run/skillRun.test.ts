import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createCatalog } from '../../src/catalog/index.ts';
import { defaultRunSettings } from '../../src/config/index.ts';
import { DRAIN_MS, KILL_GRACE_MS, MAX_STREAM_BYTES } from '../../src/run/limits.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { c1, c2, GRANTS, harness, SOURCE, scripts, skillUri, stateOf } from './harness.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';

type WillRun = Record<string, unknown> & { cwd: string; digest: string; envNames: string[] };
const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const BOUNDS = skillUri('skills/bounds');
const ENV_PROBE = skillUri('skills/env-probe');
const SERVER_ENV = {
  PATH: process.env['PATH']!,
  HOME: '/home/skillpin-test',
  LANG: 'C.UTF-8',
  PROBE_TOKEN: 'granted-value',
  POLICIES_TOKEN: 'token-of-another-source',
  SKILLPIN_TEST_SECRET: 'hunter2',
  NODE_OPTIONS: '--require /nonexistent/evil.js',
};

/** Grandchildren the scripts leave behind, ended when the file ends. */
const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) {
    // A script that printed no pid gives 0 (or NaN): kill(0) would end this whole process group.
    if (!Number.isInteger(pid) || pid <= 1) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

/** A process that no longer runs: gone, or a zombie nobody reaped yet. */
function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') === true;
  } catch {
    return true;
  }
}

/** Preview, then confirm with the token: the result of the run. */
async function confirmRun(h: Awaited<ReturnType<typeof harness>>, args: Record<string, unknown>) {
  const first = await h.run(args);
  expect(first.structuredContent?.['status']).toBe('confirmation-required');
  return h.run({ ...args, confirmToken: first.structuredContent!['confirmToken'] });
}

describe('skill_run', () => {
  it('is served only when some source grants a script, as a tool that may change things', async () => {
    const none = await harness();
    expect((await none.client.listTools()).tools.map((t) => t.name)).toEqual([
      'skill_list',
      'skill_search',
      'skill_load',
      'skill_file',
    ]);
    await none.close();
    const granted = await harness({ grants: GRANTS });
    const tool = (await granted.client.listTools()).tools.find((t) => t.name === 'skill_run');
    expect(tool?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    await granted.close();
  });

  it('runs nothing without a grant: skill_list says so, skill_run refuses', async () => {
    const h = await harness({ grants: [{ skill: 'skills/bounds', script: 'scripts/argv.js', env: [] }] });
    const list = await h.call('skill_list', {});
    const skills = list.structuredContent!['skills'] as Array<Record<string, unknown>>;
    expect(skills.find((s) => s['uri'] === ENV_PROBE)).toMatchObject({
      runnable: [],
      declaredNotGranted: ['scripts/env.js'],
      unavailableScripts: [],
    });
    expect(skills.find((s) => s['uri'] === BOUNDS)).toMatchObject({
      runnable: ['scripts/argv.js'],
      declaredNotGranted: [
        'scripts/empty.js',
        'scripts/flood.js',
        'scripts/sleep.js',
        'scripts/detach.js',
        'scripts/fail.js',
        'scripts/slow.js',
      ],
    });
    // A skill that declares nothing has no script fields.
    expect(Object.keys(skills.find((s) => s['name'] === 'broken-declaration')!)).not.toContain('runnable');
    expect(list.content[0]!.text).toContain(
      `- env-probe [skills/env-probe]: Prints the environment its script gets, and what the parent's initial environment block holds.\n  scripts: scripts/env.js (declared, not granted)`,
    );
    const refused = await h.run({ uri: ENV_PROBE, script: 'scripts/env.js' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual({
      status: 'refused',
      code: 'run-not-granted',
      reason: 'grant',
      detail: `the config of source "${SOURCE}" grants no run: line for scripts/env.js of skills/env-probe; nothing of it runs`,
    });
    const undeclared = await h.run({ uri: skillUri('skills/pdf-tools'), script: 'scripts/helper.js' });
    expect(undeclared.structuredContent).toMatchObject({
      code: 'run-not-declared',
      detail:
        'skills/pdf-tools declares no script "scripts/helper.js"; only declared scripts run (it declares scripts/extract.py)',
    });
    expect(existsSync(h.dir)).toBe(false);
    await h.close();
  });

  it('refuses a call naming no served skill (run-skill-not-found) and an argument holding a NUL (run-args-invalid)', async () => {
    const h = await harness({ grants: GRANTS });
    const refusal = async (args: Record<string, unknown>) => {
      const result = await h.run(args);
      expect(result.isError).toBe(true);
      return result.structuredContent;
    };
    expect(await refusal({ uri: BOUNDS, name: 'bounds', script: 'scripts/argv.js' })).toEqual({
      status: 'refused',
      code: 'run-skill-not-found',
      detail: 'give exactly one of uri or name',
    });
    expect(await refusal({ name: 'no-such-skill', script: 'scripts/argv.js' })).toEqual({
      status: 'refused',
      code: 'run-skill-not-found',
      detail: 'no listed skill is named "no-such-skill"; skill_list shows what is served',
    });
    expect(await refusal({ uri: BOUNDS, script: 'scripts/argv.js', args: ['a', 'b\0c'] })).toEqual({
      status: 'refused',
      code: 'run-args-invalid',
      detail: 'an argument holds a NUL character',
    });
    expect(existsSync(h.dir)).toBe(false);
    await h.close();
  });

  it('reports grant lines that grant nothing among the problems', async () => {
    const h = await harness({
      grants: [
        { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['NOT_DECLARED'] },
        { skill: 'skills/pdf-tools', script: 'scripts/helper.js', env: [] },
      ],
    });
    const problems = (await h.call('skill_list', {})).structuredContent!['problems'] as Array<
      Record<string, string>
    >;
    expect(
      problems.filter((p) => p['reason'] === 'grant').map((p) => [p['source'], p['commit'], p['path']]),
    ).toEqual([
      [SOURCE, c1, 'skills/env-probe/scripts/env.js'],
      [SOURCE, c1, 'skills/pdf-tools/scripts/helper.js'],
    ]);
    expect((await h.run({ uri: ENV_PROBE, script: 'scripts/env.js' })).structuredContent?.['code']).toBe(
      'run-not-granted',
    );
    await h.close();
  });

  it('answers the first call with a preview and a token, and runs nothing', async () => {
    const h = await harness({ grants: GRANTS, env: SERVER_ENV });
    const first = await h.run({ uri: ENV_PROBE, script: 'scripts/env.js', args: ['a b', '$HOME', '--x'] });
    const manifest = (await h.call('skill_load', { uri: ENV_PROBE })).structuredContent!['files'] as Array<{
      path: string;
      digest: string;
    }>;
    const cwd = path.join(h.dir, SOURCE, c1, 'skills%2Fenv-probe');
    expect(first.isError).toBeUndefined();
    expect(first.structuredContent).toEqual({
      status: 'confirmation-required',
      origin: { source: SOURCE, commit: c1, uri: ENV_PROBE },
      preview: {
        willRun: {
          source: SOURCE,
          commit: c1,
          skill: 'skills/env-probe',
          uri: ENV_PROBE,
          script: 'scripts/env.js',
          digest: manifest.find((f) => f.path === 'scripts/env.js')!.digest,
          interpreter: 'node',
          interpreterPath: process.execPath,
          argv: ['scripts/env.js', 'a b', '$HOME', '--x'],
          cwd,
          timeoutMs: 60_000,
          envNames: ['HOME', 'LANG', 'PATH', 'PROBE_TOKEN'],
          envNotSet: ['PROBE_UNSET'],
        },
      },
      confirmToken: expect.stringMatching(/^skr1\./),
      expiresAt: expect.any(String),
    });
    expect(first.content[0]!.text).toContain(
      'Show the user this preview and ask whether to run it. Only if the user approves, call skill_run again',
    );
    expect(existsSync(cwd)).toBe(false);
    await h.close();
  });

  it('runs once with the token: exact argv in the materialised folder; the token is then spent', async () => {
    const h = await harness({ grants: GRANTS });
    const args = { uri: BOUNDS, script: 'scripts/argv.js', args: ['a b', '--x', '', 'é'] };
    const first = await h.run(args);
    const token = first.structuredContent!['confirmToken'];
    const ran = await h.run({ ...args, confirmToken: token });
    const willRun = (first.structuredContent!['preview'] as { willRun: WillRun }).willRun;
    expect(ran.structuredContent).toMatchObject({
      status: 'ran',
      origin: { source: SOURCE, commit: c1, uri: BOUNDS },
      preview: { willRun },
      exitCode: 0,
      signal: null,
      stderr: '',
      truncated: false,
      timedOut: false,
    });
    expect(JSON.parse(ran.structuredContent!['stdout'] as string)).toEqual({
      argv: ['a b', '--x', '', 'é'],
      cwd: willRun.cwd,
    });
    const again = await h.run({ ...args, confirmToken: token });
    expect(again.structuredContent).toMatchObject({ status: 'refused', code: 'run-token-reused' });
    await h.close();
  });

  it('refuses a token for other arguments or another script with run-preview-changed', async () => {
    const h = await harness({ grants: GRANTS });
    const first = await h.run({ uri: BOUNDS, script: 'scripts/argv.js', args: ['one'] });
    const token = first.structuredContent!['confirmToken'];
    const otherArgs = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      args: ['two'],
      confirmToken: token,
    });
    expect(otherArgs.structuredContent).toMatchObject({
      code: 'run-preview-changed',
      detail:
        'the run differs from the preview the token confirms: the arguments; nothing ran, ask again for a preview',
    });
    const otherScript = await h.run({
      uri: BOUNDS,
      script: 'scripts/fail.js',
      args: ['one'],
      confirmToken: token,
    });
    expect(otherScript.structuredContent).toMatchObject({ code: 'run-preview-changed' });
    // Refused tokens are not spent: the approved run still runs.
    const ran = await h.run({ uri: BOUNDS, script: 'scripts/argv.js', args: ['one'], confirmToken: token });
    expect(ran.structuredContent?.['status']).toBe('ran');
    const forged = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      args: ['one'],
      confirmToken: 'skr1.e30.AA',
    });
    expect(forged.structuredContent).toMatchObject({ code: 'run-token-invalid' });
    await h.close();
  });

  it('refuses a token after its TTL', async () => {
    let now = 1_000_000;
    const h = await harness({ grants: GRANTS, settings: { tokenTtlMs: 60_000 }, now: () => now });
    const first = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    now += 60_000;
    const late = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      confirmToken: first.structuredContent!['confirmToken'],
    });
    expect(late.structuredContent).toMatchObject({ code: 'run-token-expired' });
    await h.close();
  });

  it('refuses with run-preview-changed when the tracked ref moved between preview and run; a URI keeps its commit', async () => {
    const v1 = await namespaceOf(SOURCE, scripts.gitdir, c1);
    const h = await harness({ grants: GRANTS, namespaces: [v1] });
    const byName = { name: 'bounds', script: 'scripts/argv.js' };
    const atV1 = await h.run(byName);
    const atV1ByUri = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    const v2 = await namespaceOf(SOURCE, scripts.gitdir, c2);
    h.catalog.swap({ sources: [{ id: SOURCE, current: v2, retained: [v1] }], failures: [] });
    const moved = await h.run({ ...byName, confirmToken: atV1.structuredContent!['confirmToken'] });
    expect(moved.structuredContent).toMatchObject({
      status: 'refused',
      code: 'run-preview-changed',
      detail: `the run differs from the preview the token confirms: the commit (the token is for ${c1}, the skill is now at ${c2}), the script or its bytes; nothing ran, ask again for a preview`,
    });
    const again = await confirmRun(h, byName);
    expect((again.structuredContent!['preview'] as { willRun: WillRun }).willRun).toMatchObject({
      commit: c2,
      cwd: path.join(h.dir, SOURCE, c2, 'skills%2Fbounds'),
    });
    // The URI names c1, still served (retained): its token still runs c1's bytes.
    const pinned = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      confirmToken: atV1ByUri.structuredContent!['confirmToken'],
    });
    expect(pinned.structuredContent).toMatchObject({ status: 'ran', origin: { commit: c1 } });
    await h.close();
  });

  it('runs the exact bytes of the commit: the materialised folder is the manifest, read-only', async () => {
    const h = await harness({ grants: GRANTS });
    const ran = await confirmRun(h, { uri: BOUNDS, script: 'scripts/argv.js' });
    const { cwd, digest } = (ran.structuredContent!['preview'] as { willRun: WillRun }).willRun;
    const manifest = (await h.call('skill_load', { uri: BOUNDS })).structuredContent!['files'] as Array<{
      path: string;
      size: number;
      digest: string;
    }>;
    expect(sha256(readFileSync(path.join(cwd, 'scripts', 'argv.js')))).toBe(digest);
    for (const file of manifest) {
      const bytes = readFileSync(path.join(cwd, file.path));
      expect([file.path, bytes.byteLength, sha256(bytes)]).toEqual([file.path, file.size, file.digest]);
    }
    expect(readFileSync(path.join(h.dir, 'package.json'), 'utf8')).toBe('{}\n');
    const modes = [
      cwd,
      path.join(cwd, 'scripts'),
      path.join(cwd, 'scripts', 'argv.js'),
      path.join(cwd, 'SKILL.md'),
    ].map((entry) => statSync(entry).mode & 0o777);
    expect(modes).toEqual([0o500, 0o500, 0o400, 0o400]);
    expect(statSync(h.dir).mode & 0o777).toBe(0o700);
    await h.close();
  });

  it('cuts a 5 MiB stdout at exactly 1 MiB and says truncated', async () => {
    const h = await harness({ grants: GRANTS });
    const ran = await confirmRun(h, { uri: BOUNDS, script: 'scripts/flood.js' });
    const expected = Buffer.alloc(MAX_STREAM_BYTES, 'abcdefghijklmnopqrstuvwxyz\n').toString();
    expect(ran.structuredContent).toMatchObject({
      status: 'ran',
      exitCode: 0,
      stderr: 'flooded\n',
      truncated: true,
      timedOut: false,
    });
    expect(ran.structuredContent!['stdout']).toBe(expected);
    await h.close();
  });

  it('ends a script at its timeout, with the children of its process group, and returns in time', async () => {
    const h = await harness({ grants: GRANTS });
    const ran = await confirmRun(h, { uri: BOUNDS, script: 'scripts/sleep.js' });
    const result = ran.structuredContent!;
    expect(result).toMatchObject({ status: 'ran', exitCode: null, signal: 'SIGTERM', timedOut: true });
    expect(result['durationMs']).toBeGreaterThanOrEqual(1000);
    expect(result['durationMs']).toBeLessThan(1000 + KILL_GRACE_MS + DRAIN_MS);
    const child = Number((result['stdout'] as string).trim());
    expect(child).toBeGreaterThan(0);
    leftovers.push(child);
    await until('the child in the script group to end', () => ended(child));
    await h.close();
  });

  it('returns when the script exits even though a detached grandchild holds its pipes open', async () => {
    const h = await harness({ grants: GRANTS });
    const first = await h.run({ uri: BOUNDS, script: 'scripts/detach.js' });
    const started = performance.now();
    const ran = await h.run({
      uri: BOUNDS,
      script: 'scripts/detach.js',
      confirmToken: first.structuredContent!['confirmToken'],
    });
    const elapsed = performance.now() - started;
    const grandchild = Number((ran.structuredContent!['stdout'] as string).trim());
    leftovers.push(grandchild);
    expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0, timedOut: false });
    // The grandchild holds the pipes for a minute; the call is back before the script's own 5 s timeout.
    expect(elapsed).toBeLessThan(5000);
    expect(ended(grandchild)).toBe(false);
    await h.close();
  });

  it('reports a non-zero exit as a result, with both streams', async () => {
    const h = await harness({ grants: GRANTS });
    const ran = await confirmRun(h, { uri: BOUNDS, script: 'scripts/fail.js' });
    expect(ran.isError).toBeUndefined();
    expect(ran.structuredContent).toMatchObject({
      status: 'ran',
      exitCode: 3,
      signal: null,
      stdout: 'partial output\n',
      stderr: 'bad input: expected a date\n',
    });
    expect(ran.content[0]!.text).toMatch(
      /^Ran scripts\/fail\.js of skills\/bounds \(source "scripts", commit [0-9a-f]{40}\): exit code 3 in \d+ ms\n--- stdout ---\npartial output\n--- stderr ---\nbad input: expected a date$/,
    );
    await h.close();
  });

  it('caps a declared timeout at 300 s', async () => {
    const h = await harness({ grants: GRANTS });
    const first = await h.run({ uri: BOUNDS, script: 'scripts/slow.js' });
    expect((first.structuredContent!['preview'] as { willRun: WillRun }).willRun['timeoutMs']).toBe(300_000);
    await h.close();
  });

  it('gives the script only the allowlist and its granted variables, exactly as the preview names them', async () => {
    const h = await harness({ grants: GRANTS, env: SERVER_ENV });
    const ran = await confirmRun(h, { uri: ENV_PROBE, script: 'scripts/env.js' });
    const { envNames } = (ran.structuredContent!['preview'] as { willRun: WillRun }).willRun;
    const printed = JSON.parse(ran.structuredContent!['stdout'] as string) as { env: Record<string, string> };
    expect(printed.env).toEqual({
      HOME: '/home/skillpin-test',
      LANG: 'C.UTF-8',
      PATH: SERVER_ENV.PATH,
      PROBE_TOKEN: 'granted-value',
    });
    expect(Object.keys(printed.env).sort()).toEqual(envNames);
    expect(ran.structuredContent!['stdout']).not.toContain('hunter2');
    expect(ran.structuredContent!['stdout']).not.toContain('token-of-another-source');
    await h.close();
  });

  it('reports a python3 script where python3 is missing as interpreter-unavailable, and runs it where it is', async () => {
    const grants = [{ skill: 'skills/pdf-tools', script: 'scripts/extract.py', env: [] }];
    const bin = tempDir('skillpin-bin-');
    const settings = { interpreters: ['node' as const, 'python3' as const] };
    const missing = await harness({ grants, settings, env: { PATH: bin } });
    const skills = (await missing.call('skill_list', {})).structuredContent!['skills'] as Array<
      Record<string, unknown>
    >;
    const detail = "python3 is allowed but not found on the server's PATH";
    expect(skills.find((s) => s['name'] === 'pdf-tools')).toMatchObject({
      runnable: [],
      declaredNotGranted: [],
      unavailableScripts: [
        { script: 'scripts/extract.py', interpreter: 'python3', reason: 'interpreter-unavailable', detail },
      ],
    });
    const refused = await missing.run({ name: 'pdf-tools', script: 'scripts/extract.py' });
    expect(refused.structuredContent).toEqual({
      status: 'refused',
      code: 'run-unavailable',
      reason: 'interpreter-unavailable',
      detail,
    });
    await missing.close();
    // A python3 on the server's PATH (here a stand-in that reports how it was called) runs the script.
    writeFileSync(
      path.join(bin, 'python3'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e 'process.stdout.write(JSON.stringify(process.argv.slice(1)))' -- "$@"\n`,
    );
    chmodSync(path.join(bin, 'python3'), 0o755);
    const present = await harness({ grants, settings, env: { PATH: bin } });
    const ran = await confirmRun(present, {
      name: 'pdf-tools',
      script: 'scripts/extract.py',
      args: ['in.pdf'],
    });
    const { cwd, interpreterPath } = (ran.structuredContent!['preview'] as { willRun: WillRun }).willRun;
    expect(interpreterPath).toBe(path.join(bin, 'python3'));
    expect(JSON.parse(ran.structuredContent!['stdout'] as string)).toEqual([
      path.join(cwd, 'scripts', 'extract.py'),
      'in.pdf',
    ]);
    // An interpreter gone since start: nothing runs, and the call says so.
    rmSync(path.join(bin, 'python3'));
    const gone = await confirmRun(present, { name: 'pdf-tools', script: 'scripts/extract.py' });
    expect(gone.structuredContent).toMatchObject({
      status: 'refused',
      code: 'run-failed',
      detail: 'the python3 process could not be started (ENOENT)',
    });
    await present.close();
  });

  it('runs one script at a time: a second run is refused with run-busy and its token stays good', async () => {
    const h = await harness({ grants: GRANTS });
    const slow = await h.run({ uri: BOUNDS, script: 'scripts/sleep.js' });
    const quick = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    const slowRun = h.run({
      uri: BOUNDS,
      script: 'scripts/sleep.js',
      confirmToken: slow.structuredContent!['confirmToken'],
    });
    const cwd = path.join(h.dir, SOURCE, c1, 'skills%2Fbounds');
    await until('the first run to take the folder', () => existsSync(cwd));
    const busy = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      confirmToken: quick.structuredContent!['confirmToken'],
    });
    expect(busy.structuredContent).toMatchObject({ status: 'refused', code: 'run-busy' });
    const first = await slowRun;
    leftovers.push(Number((first.structuredContent!['stdout'] as string).trim()));
    const after = await h.run({
      uri: BOUNDS,
      script: 'scripts/argv.js',
      confirmToken: quick.structuredContent!['confirmToken'],
    });
    expect(after.structuredContent?.['status']).toBe('ran');
    await h.close();
  });

  it('writes the materialised folder again when a run changed it', async () => {
    const h = await harness({ grants: GRANTS });
    const ran = await confirmRun(h, { uri: BOUNDS, script: 'scripts/argv.js' });
    const { cwd } = (ran.structuredContent!['preview'] as { willRun: WillRun }).willRun;
    const script = path.join(cwd, 'scripts', 'argv.js');
    const original = readFileSync(script);
    chmodSync(path.join(cwd, 'scripts'), 0o700);
    chmodSync(script, 0o600);
    writeFileSync(script, "process.stdout.write('tampered');\n");
    writeFileSync(path.join(cwd, 'scripts', 'extra.js'), '');
    const again = await confirmRun(h, { uri: BOUNDS, script: 'scripts/argv.js' });
    expect(JSON.parse(again.structuredContent!['stdout'] as string)).toEqual({ argv: [], cwd });
    expect(readFileSync(script)).toEqual(original);
    expect(existsSync(path.join(cwd, 'scripts', 'extra.js'))).toBe(false);
    await h.close();
  });
});

describe('skill_run logs', () => {
  it('logs lines that grant nothing and granted scripts that cannot run as soon as the commit is served', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info', base: undefined, timestamp: false },
      { write: (line: string) => void lines.push(line) },
    );
    const catalog = createCatalog();
    createServerFactory({
      catalog,
      logger,
      cache: cachePolicy({ listTtlMs: 1000, pinnedTtlMs: 1000 }),
      run: {
        grants: new Map([
          [
            SOURCE,
            [
              { skill: 'skills/nope', script: 'run.js', env: [] },
              { skill: 'skills/pdf-tools', script: 'scripts/extract.py', env: [] },
            ],
          ],
        ]),
        settings: defaultRunSettings(),
        dir: path.join(tempDir(), 'run'),
        environ: { state: 'scrubbed' },
      },
    });
    expect(lines).toEqual([]);
    catalog.swap(stateOf(await namespaceOf(SOURCE, scripts.gitdir, c1)));
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      {
        level: 40,
        source: SOURCE,
        commit: c1,
        path: 'skills/nope',
        reason: 'grant',
        msg: 'run: names the skill folder skills/nope, where this commit serves no skill; the line grants nothing',
      },
      {
        level: 40,
        source: SOURCE,
        commit: c1,
        path: 'skills/pdf-tools/scripts/extract.py',
        reason: 'interpreter-unavailable',
        msg: 'granted, but cannot run here: python3 is not allowed here (runs.interpreters: [node])',
      },
    ]);
  });
});

describe('skill_run confirmation', () => {
  it('asks a host that can show a prompt, and runs when the user accepts', async () => {
    const h = await harness({
      grants: GRANTS,
      elicit: () => ({ action: 'accept', content: { confirm: true } }),
    });
    const ran = await h.run({ uri: BOUNDS, script: 'scripts/argv.js', args: ['x'] });
    expect(ran.structuredContent).toMatchObject({ status: 'ran', exitCode: 0 });
    expect(h.prompts).toHaveLength(1);
    expect(h.prompts[0]!.message).toMatch(
      /^Run this script\?\nskill: skills\/bounds of source "scripts" at commit [0-9a-f]{40}\nscript: scripts\/argv\.js \(sha256:[0-9a-f]{64}\)\n/,
    );
    expect(h.prompts[0]!.requestedSchema).toEqual({
      type: 'object',
      properties: {
        confirm: { type: 'boolean', title: 'Run it', description: 'Run this script once, as shown' },
      },
      required: ['confirm'],
    });
    await h.close();
  });

  it.each([
    ['declines', { action: 'decline' as const }],
    ['cancels', { action: 'cancel' as const }],
    ['accepts without confirming', { action: 'accept' as const, content: { confirm: false } }],
  ])('runs nothing when the user %s', async (_what, answer) => {
    const h = await harness({ grants: GRANTS, elicit: () => answer });
    const result = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    expect(result.structuredContent).toMatchObject({ status: 'declined' });
    expect(existsSync(h.dir)).toBe(false);
    await h.close();
  });

  it('gives a prompt-capable host the token instead when runs.elicitation is off', async () => {
    const h = await harness({
      grants: GRANTS,
      settings: { elicitation: false },
      elicit: () => ({ action: 'accept', content: { confirm: true } }),
    });
    const first = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    expect(first.structuredContent?.['status']).toBe('confirmation-required');
    expect(h.prompts).toEqual([]);
    await h.close();
  });

  it('lets the model approve under auto, and refuses hosts without prompts under refuse', async () => {
    const auto = await harness({ grants: GRANTS, settings: { confirm: 'auto' } });
    const preview = await auto.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    expect(preview.content[0]!.text).toContain(
      'If this is the run you intend, call skill_run again with the same',
    );
    await auto.close();
    const refuse = await harness({ grants: GRANTS, settings: { confirm: 'refuse' } });
    const refused = await refuse.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    expect(refused.structuredContent).toMatchObject({
      status: 'refused',
      code: 'run-confirmation-unavailable',
    });
    await refuse.close();
    const asked = await harness({
      grants: GRANTS,
      settings: { confirm: 'refuse' },
      elicit: () => ({ action: 'accept', content: { confirm: true } }),
    });
    expect((await asked.run({ uri: BOUNDS, script: 'scripts/argv.js' })).structuredContent?.['status']).toBe(
      'ran',
    );
    await asked.close();
  });

  it('runs nothing where the environment block could not be cleared, unless allowed', async () => {
    const environ = { state: 'unscrubbed' as const, detail: 'cannot write /proc/self/mem: EPERM' };
    const h = await harness({ grants: GRANTS, environ });
    const refused = await h.run({ uri: BOUNDS, script: 'scripts/argv.js' });
    expect(refused.structuredContent).toMatchObject({
      code: 'run-unavailable',
      reason: 'environ-unscrubbed',
      detail: 'cannot write /proc/self/mem: EPERM',
    });
    const problems = (await h.call('skill_list', {})).structuredContent!['problems'] as Array<
      Record<string, string>
    >;
    expect(problems.filter((p) => p['reason'] === 'environ-unscrubbed').map((p) => p['path'])).toEqual(['.']);
    await h.close();
    const allowed = await harness({ grants: GRANTS, environ, settings: { allowUnscrubbed: true } });
    expect(
      (await confirmRun(allowed, { uri: BOUNDS, script: 'scripts/argv.js' })).structuredContent?.['status'],
    ).toBe('ran');
    await allowed.close();
  });
});
