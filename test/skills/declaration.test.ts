import { describe, expect, it } from 'vitest';
import { parseSkillMd, readDeclaration } from '../../src/skills/index.ts';

const FILES = new Set(['SKILL.md', 'scripts/a.js', 'scripts/b.py']);

/** The declaration of a SKILL.md whose frontmatter holds `block` under mcp-host:, in folder skills/s. */
function declarationOf(block: string, files: ReadonlySet<string> = FILES) {
  const parsed = parseSkillMd(new TextEncoder().encode(`---\nname: s\ndescription: d\n${block}---\nbody\n`));
  if (!parsed.ok) throw new Error(parsed.detail);
  return readDeclaration(parsed.frontmatter, 'skills/s', files);
}

const refused = (detail: string) => ({
  problems: [
    {
      path: 'skills/s/SKILL.md',
      reason: 'declaration',
      severity: 'warning',
      detail: `${detail}; the skill's scripts are not declared`,
    },
  ],
});

describe('the mcp-host: declaration', () => {
  it('is absent when the frontmatter has no block: nothing declared, nothing reported', () => {
    expect(declarationOf('')).toEqual({ problems: [] });
  });

  it('declares scripts with interpreter, variables and timeout, and the egress it proposes', () => {
    const result = declarationOf(
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: node\n      env: [A_KEY, B]\n      timeout: 30\n    - script: scripts/b.py\n      interpreter: python3\n  env:\n    - name: A_KEY\n      secret: true\n  egress: [api.example.invalid]\n',
    );
    expect(result).toEqual({
      declaration: {
        scripts: [
          { script: 'scripts/a.js', interpreter: 'node', env: ['A_KEY', 'B'], timeout: 30 },
          { script: 'scripts/b.py', interpreter: 'python3', env: [] },
        ],
        egress: ['api.example.invalid'],
      },
      problems: [],
    });
  });

  it.each([
    ['mcp-host: yes\n', 'mcp-host must be a mapping'],
    ['mcp-host:\n  run: []\n', 'mcp-host.version is missing'],
    ['mcp-host:\n  version: 2\n  run: []\n', 'mcp-host.version 2 is not a version this server reads (1)'],
    ['mcp-host:\n  version: "one"\n', 'mcp-host.version "one" is not a version this server reads (1)'],
    ['mcp-host:\n  version: 1\n  run: scripts/a.js\n', 'mcp-host.run must be a list'],
    [
      'mcp-host:\n  version: 1\n  run:\n    - scripts/a.js\n',
      'mcp-host.run[0] must be a mapping with script and interpreter',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: ../other/x.js\n      interpreter: node\n',
      'mcp-host.run[0].script "../other/x.js" must not hold ".", ".." or empty segments',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: /etc/passwd\n      interpreter: node\n',
      'mcp-host.run[0].script "/etc/passwd" must be a path relative to the skill folder',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/%61.js\n      interpreter: node\n',
      'mcp-host.run[0].script "scripts/%61.js" must not hold percent-escapes',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: "scripts\\\\a.js"\n      interpreter: node\n',
      'mcp-host.run[0].script "scripts\\\\a.js" holds a control character, a backslash or bytes that are not UTF-8',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n',
      'mcp-host.run[0].interpreter must name an interpreter (node, python3)',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: node\n      env: [A, A]\n',
      'mcp-host.run[0].env must be a list of distinct variable names',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: node\n      env: [A-B]\n',
      'mcp-host.run[0].env must be a list of distinct variable names',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: node\n      timeout: 0\n',
      'mcp-host.run[0].timeout must be a positive number of seconds',
    ],
    [
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: node\n    - script: scripts/a.js\n      interpreter: node\n',
      'mcp-host.run[1].script scripts/a.js is declared twice',
    ],
    [
      'mcp-host:\n  version: 1\n  egress: api.example.invalid\n',
      'mcp-host.egress must be a list of host names',
    ],
    [
      'mcp-host:\n  version: 1\n  env:\n    - name: A\n      secret: maybe\n',
      'mcp-host.env[0].secret must be true or false',
    ],
  ])('refuses the whole block when it is wrong: %j', (block, detail) => {
    expect(declarationOf(block)).toEqual(refused(detail));
  });

  it('names every error of a refused block, not only the first', () => {
    expect(
      declarationOf('mcp-host:\n  version: 1\n  run:\n    - script: a\n    - interpreter: node\n')
        .problems[0]!.detail,
    ).toBe(
      "mcp-host.run[0].interpreter must name an interpreter (node, python3); mcp-host.run[1].script must be a path; the skill's scripts are not declared",
    );
  });

  it('reads a minor version of major 1', () => {
    expect(declarationOf('mcp-host:\n  version: 1.2\n').declaration).toEqual({ scripts: [], egress: [] });
  });

  it('ignores keys it does not know, names them, and keeps the scripts', () => {
    const result = declarationOf(
      'mcp-host:\n  version: 1\n  sandbox: strict\n  run:\n    - script: scripts/a.js\n      interpreter: node\n      shell: true\n  env:\n    - name: A\n      scope: all\n',
    );
    expect(result).toEqual({
      declaration: { scripts: [{ script: 'scripts/a.js', interpreter: 'node', env: [] }], egress: [] },
      problems: [
        {
          path: 'skills/s/SKILL.md',
          reason: 'declaration',
          severity: 'warning',
          detail:
            'keys this server does not read were ignored: mcp-host.sandbox, mcp-host.run[0].shell, mcp-host.env[0].scope',
        },
      ],
    });
  });

  it('keeps an interpreter no deployment runs as declared: where it runs is decided elsewhere', () => {
    expect(
      declarationOf('mcp-host:\n  version: 1\n  run:\n    - script: scripts/a.js\n      interpreter: bash\n')
        .declaration?.scripts,
    ).toEqual([{ script: 'scripts/a.js', interpreter: 'bash', env: [] }]);
  });

  it('drops a declared script that is not a file of the skill, and reports it where it would be', () => {
    const result = declarationOf(
      'mcp-host:\n  version: 1\n  run:\n    - script: scripts/gone.js\n      interpreter: node\n    - script: scripts/a.js\n      interpreter: node\n',
    );
    expect(result).toEqual({
      declaration: { scripts: [{ script: 'scripts/a.js', interpreter: 'node', env: [] }], egress: [] },
      problems: [
        {
          path: 'skills/s/scripts/gone.js',
          reason: 'declared-script-missing',
          severity: 'warning',
          detail: 'mcp-host declares scripts/gone.js, which is not a file of the skill; it cannot run',
        },
      ],
    });
  });
});
