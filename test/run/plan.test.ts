import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunGrants } from '../../src/config/index.ts';
import { openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { type IndexedSkill, indexCommit } from '../../src/index/index.ts';
import { scriptEnvironment } from '../../src/run/environment.ts';
import { interpretersOf } from '../../src/run/interpreters.ts';
import { type Deployment, planNamespace } from '../../src/run/plan.ts';
import { fixture } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

const scripts = fixture('scripts');
let skills: IndexedSkill[];

beforeAll(async () => {
  const repo = await openLocalRepository(scripts.gitdir);
  const tree = await walkCommit(repo, scripts.commits['c1']!);
  skills = (await indexCommit({ ...tree, readBlob: (id) => readBlob(repo, id) })).skills;
});

const deployment = (overrides: Partial<Deployment> = {}): Deployment => ({
  interpreters: interpretersOf(['node'], { PATH: '' }),
  environ: { state: 'scrubbed' },
  allowUnscrubbed: false,
  ...overrides,
});

/** Each skill folder's scripts as `script: state[ (env)| reason]`. */
function states(grants: RunGrants | undefined, where: Deployment = deployment()) {
  const plan = planNamespace(skills, grants, where);
  const shown: Record<string, string[]> = {};
  for (const [dir, planned] of plan.skills)
    shown[dir] = planned.map(({ declared, status }) =>
      status.state === 'runnable'
        ? `${declared.script}: runnable [${status.env.join(' ')}]`
        : status.state === 'unavailable'
          ? `${declared.script}: ${status.reason}`
          : `${declared.script}: not-granted`,
    );
  return { shown, problems: plan.problems.map((p) => [p.path, p.reason, p.detail]) };
}

describe('grants meet declarations', () => {
  it('without grants every declared script is declared but not granted, and nothing is reported', () => {
    const { shown, problems } = states(undefined);
    expect(shown['skills/env-probe']).toEqual(['scripts/env.js: not-granted']);
    expect(shown['skills/pdf-tools']).toEqual(['scripts/extract.py: not-granted']);
    expect(Object.keys(shown)).toEqual([
      'other/impostor',
      'skills/bounds',
      'skills/env-probe',
      'skills/missing-script',
      'skills/odd-keys',
      'skills/pdf-tools',
    ]);
    expect(problems).toEqual([]);
  });

  it('names a skill by its folder: the impostor named env-probe gets nothing of skills/env-probe', () => {
    const { shown } = states([{ skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_TOKEN'] }]);
    expect(shown['skills/env-probe']).toEqual(['scripts/env.js: runnable [PROBE_TOKEN]']);
    expect(shown['other/impostor']).toEqual(['scripts/env.js: not-granted']);
    expect(skills.find((skill) => skill.dir === 'other/impostor')?.name).toBe('env-probe');
  });

  it('gives the variables both name, in declaration order, joining lines for one script', () => {
    const { shown } = states([
      { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_UNSET'] },
      { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_TOKEN'] },
    ]);
    expect(shown['skills/env-probe']).toEqual(['scripts/env.js: runnable [PROBE_TOKEN PROBE_UNSET]']);
  });

  it('reports a line naming an unknown folder, an undeclared script or an undeclared variable: it grants nothing', () => {
    const { shown, problems } = states([
      { skill: 'skills/weather', script: 'scripts/forecast.js', env: [] },
      { skill: 'skills/pdf-tools', script: 'scripts/helper.js', env: [] },
      { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_TOKEN', 'HOME_SECRET'] },
      { skill: 'skills/bounds', script: 'scripts/argv.js', env: [] },
    ]);
    expect(problems).toEqual([
      [
        'skills/weather',
        'grant',
        'run: names the skill folder skills/weather, where this commit serves no skill; the line grants nothing',
      ],
      [
        'skills/pdf-tools/scripts/helper.js',
        'grant',
        'run: names scripts/helper.js, which skills/pdf-tools does not declare (it declares scripts/extract.py); the line grants nothing',
      ],
      [
        'skills/env-probe/scripts/env.js',
        'grant',
        'run: grants HOME_SECRET to scripts/env.js, which declares PROBE_TOKEN, PROBE_UNSET; the line grants nothing',
      ],
    ]);
    expect(shown['skills/env-probe']).toEqual(['scripts/env.js: not-granted']);
    expect(shown['skills/pdf-tools']).toEqual(['scripts/extract.py: not-granted']);
    expect(shown['skills/bounds']![0]).toBe('scripts/argv.js: runnable []');
    expect(shown['skills/bounds']![1]).toBe('scripts/empty.js: not-granted');
  });

  it('all-declared grants every declared script every variable it declares; python3 stays unavailable here', () => {
    const { shown, problems } = states('all-declared');
    expect(shown['skills/env-probe']).toEqual(['scripts/env.js: runnable [PROBE_TOKEN PROBE_UNSET]']);
    expect(shown['other/impostor']).toEqual(['scripts/env.js: runnable [PROBE_TOKEN]']);
    expect(shown['skills/pdf-tools']).toEqual(['scripts/extract.py: interpreter-unavailable']);
    expect(problems).toEqual([]);
  });

  it('runs python3 only when allowed and found on PATH, and says which it is not', () => {
    const grants: RunGrants = [{ skill: 'skills/pdf-tools', script: 'scripts/extract.py', env: [] }];
    const detail = (where: Deployment) => {
      const status = planNamespace(skills, grants, where).skills.get('skills/pdf-tools')![0]!.status;
      return status.state === 'unavailable' ? status.detail : status;
    };
    expect(detail(deployment())).toBe('python3 is not allowed here (runs.interpreters: [node])');
    const bin = tempDir('skillpin-bin-');
    const allowed = (PATH: string) =>
      deployment({ interpreters: interpretersOf(['node', 'python3'], { PATH }) });
    expect(detail(allowed(`relative/bin${path.delimiter}${bin}`))).toBe(
      "python3 is allowed but not found on the server's PATH",
    );
    mkdirSync(path.join(bin, 'sub'));
    writeFileSync(path.join(bin, 'python3'), '#!/bin/sh\n');
    expect(detail(allowed(bin))).toBe("python3 is allowed but not found on the server's PATH");
    chmodSync(path.join(bin, 'python3'), 0o755);
    expect(detail(allowed(`${path.join(bin, 'sub')}${path.delimiter}${bin}`))).toEqual({
      state: 'runnable',
      interpreterPath: path.join(bin, 'python3'),
      env: [],
    });
    expect(interpretersOf(['node'], {})('bash')).toEqual({
      ok: false,
      detail: 'bash is not an interpreter skillpin runs (node, python3)',
    });
    expect(interpretersOf(['node'], {})('node')).toEqual({ ok: true, path: process.execPath });
  });

  it('runs nothing granted where the environment block was not cleared, unless allowed, and says so', () => {
    const environ = { state: 'unscrubbed' as const, detail: 'cannot write /proc/self/mem: EPERM' };
    const grants: RunGrants = [{ skill: 'skills/bounds', script: 'scripts/argv.js', env: [] }];
    const blocked = states(grants, deployment({ environ }));
    expect(blocked.shown['skills/bounds']!.slice(0, 2)).toEqual([
      'scripts/argv.js: environ-unscrubbed',
      'scripts/empty.js: not-granted',
    ]);
    expect(blocked.problems).toEqual([
      [
        '.',
        'environ-unscrubbed',
        'cannot write /proc/self/mem: EPERM; no script of this source runs (runs.allowUnscrubbed: true runs them anyway)',
      ],
    ]);
    const allowed = states(grants, deployment({ environ, allowUnscrubbed: true }));
    expect(allowed.shown['skills/bounds']![0]).toBe('scripts/argv.js: runnable []');
    expect(allowed.problems).toEqual([
      [
        '.',
        'environ-unscrubbed',
        'cannot write /proc/self/mem: EPERM; scripts run anyway (runs.allowUnscrubbed: true) and can read it',
      ],
    ]);
    expect(states(undefined, deployment({ environ })).problems).toEqual([]);
  });
});

describe('the environment of a script', () => {
  const server = {
    PATH: '/usr/bin',
    HOME: '/home/skillpin',
    LANG: 'C.UTF-8',
    HTTPS_PROXY: 'http://proxy.invalid:3128',
    no_proxy: 'localhost',
    POLICIES_TOKEN: 'secret-of-another-source',
    SKILLPIN_WEBHOOK_SECRET: 'webhook',
    PROBE_TOKEN: 'granted',
    NODE_OPTIONS: '--require /tmp/evil.js',
  };

  it('is the allowlist and the granted variables that are set: nothing else', () => {
    expect(scriptEnvironment(['PROBE_TOKEN', 'PROBE_UNSET'], server)).toEqual({
      env: { PATH: '/usr/bin', HOME: '/home/skillpin', LANG: 'C.UTF-8', PROBE_TOKEN: 'granted' },
      names: ['HOME', 'LANG', 'PATH', 'PROBE_TOKEN'],
      notSet: ['PROBE_UNSET'],
    });
  });

  it('passes a proxy variable only when it is granted: it may hold the proxy credentials', () => {
    const withProxy = { ...server, HTTPS_PROXY: 'http://user:pass@proxy.invalid:3128' };
    expect(scriptEnvironment([], withProxy).names).toEqual(['HOME', 'LANG', 'PATH']);
    expect(scriptEnvironment(['HTTPS_PROXY', 'no_proxy'], withProxy)).toEqual({
      env: {
        PATH: '/usr/bin',
        HOME: '/home/skillpin',
        LANG: 'C.UTF-8',
        HTTPS_PROXY: 'http://user:pass@proxy.invalid:3128',
        no_proxy: 'localhost',
      },
      names: ['HOME', 'HTTPS_PROXY', 'LANG', 'PATH', 'no_proxy'],
      notSet: [],
    });
  });

  it('keeps a variable named __proto__ a variable', () => {
    const from = JSON.parse('{"__proto__": "x", "PATH": "/bin"}') as NodeJS.ProcessEnv;
    const result = scriptEnvironment(['__proto__'], from);
    expect(Object.getPrototypeOf(result.env)).toBe(Object.prototype);
    expect(Object.entries(result.env)).toEqual([
      ['PATH', '/bin'],
      ['__proto__', 'x'],
    ]);
  });
});
