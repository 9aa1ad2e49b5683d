import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultRunSettings, loadConfig } from '../../src/config/index.ts';
import { tempDir } from '../helpers/temp.ts';

function load(text: string, env: NodeJS.ProcessEnv = {}) {
  const file = path.join(tempDir('skillpin-config-'), 'skillpin.yaml');
  writeFileSync(file, text);
  try {
    return { config: loadConfig(file, env) };
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return { error: (error as Error).message.replace(file, '<file>') };
  }
}

const source = (run: string) => `sources:\n  - id: a\n    path: x\n    ref: HEAD\n    run: ${run}\n`;

describe('run: and runs:', () => {
  it('reads grant lines by folder path (. for the root), with their variables', () => {
    const { config } = load(
      source(
        '\n      - skill: skills/weather/\n        script: scripts/forecast.js\n        env: [WEATHER_API_KEY]\n      - skill: .\n        script: ./run.js',
      ),
    );
    expect(config?.sources[0]?.run).toEqual([
      { skill: 'skills/weather', script: 'scripts/forecast.js', env: ['WEATHER_API_KEY'] },
      { skill: '', script: 'run.js', env: [] },
    ]);
  });

  it('reads all-declared, and no run: as nothing granted', () => {
    expect(load(source('all-declared')).config?.sources[0]?.run).toBe('all-declared');
    expect(load('sources:\n  - id: a\n    path: x\n    ref: HEAD\n').config?.sources[0]?.run).toBeUndefined();
  });

  it('has defaults that run nothing by themselves, and reads every runs: key', () => {
    expect(load(source('[]')).config?.runs).toEqual(defaultRunSettings());
    expect(defaultRunSettings()).toEqual({
      confirm: 'ask-user',
      elicitation: true,
      tokenTtlMs: 600_000,
      interpreters: ['node'],
      allowUnscrubbed: false,
    });
    const { config } = load(
      `runs:\n  confirm: auto\n  elicitation: false\n  tokenTtl: 90s\n  secret: \${RUN_SECRET}\n  interpreters: [node, python3]\n  allowUnscrubbed: true\n${source('all-declared')}`,
      { RUN_SECRET: 'shh' },
    );
    expect(config?.runs).toEqual({
      confirm: 'auto',
      elicitation: false,
      tokenTtlMs: 90_000,
      secret: 'shh',
      interpreters: ['node', 'python3'],
      allowUnscrubbed: true,
    });
  });

  it('reads runs.user as a name or a numeric uid, and refuses anything else', () => {
    expect(load(`runs:\n  user: nobody\n${source('[]')}`).config?.runs.user).toBe('nobody');
    expect(load(`runs:\n  user: 1200\n${source('[]')}`).config?.runs.user).toBe('1200');
    expect(load(`runs:\n  user: "x y"\n${source('[]')}`).error).toBe(
      '<file>:2:9: runs.user: must be a user name or a numeric uid',
    );
    expect(load(`runs:\n  user: -1\n${source('[]')}`).error).toMatch(/^<file>:2:9: runs\.user: /);
  });

  it.each([
    [
      source('everything'),
      '<file>:5:10: sources[0].run: must be a list of {skill, script, env} grants, or all-declared',
    ],
    [
      source('\n      - skill: ../up\n        script: a.js'),
      '<file>:6:16: sources[0].run[0].skill: must be the skill folder inside the repository (relative, "/"-separated, no "." or "..")',
    ],
    [
      source('\n      - skill: s\n        script: a/./b.js'),
      '<file>:7:17: sources[0].run[0].script: must be the script path below the skill folder inside the repository (relative, "/"-separated, no "." or "..")',
    ],
    [
      source('\n      - skill: s\n        script: .'),
      '<file>:7:17: sources[0].run[0].script: must name a file',
    ],
    [
      source('\n      - skill: s\n        script: a.js\n        env: [NOT-A-NAME]'),
      '<file>:8:15: sources[0].run[0].env[0]: must be an environment variable name',
    ],
    [
      source('\n      - skill: s\n        script: a.js\n        shell: true'),
      '<file>:8:9: sources[0].run[0]: unknown key "shell"',
    ],
    [
      `runs:\n  confirm: sometimes\n${source('[]')}`,
      '<file>:2:12: runs.confirm: must be one of ask-user, auto, refuse',
    ],
    [
      `runs:\n  secret: plain\n${source('[]')}`,
      '<file>:2:11: runs.secret: must be an environment reference like ${SKILLPIN_RUN_SECRET}; secrets are never written in the config',
    ],
    [
      `runs:\n  secret: \${UNSET_SECRET}\n${source('[]')}`,
      '<file>:2:11: runs.secret: environment variable UNSET_SECRET is not set',
    ],
    [
      `runs:\n  interpreters: [bash]\n${source('[]')}`,
      '<file>:2:18: runs.interpreters[0]: must be one of node, python3',
    ],
    [`runs:\n  tokenTtl: 10ms\n${source('[]')}`, '<file>:2:13: runs.tokenTtl: tokenTtl must be at least 1s'],
  ])('refuses %j', (text, message) => {
    expect(load(text).error).toBe(message);
  });
});
