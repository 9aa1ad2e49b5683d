import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

const C = 'b'.repeat(40);

function configFile(text: string): string {
  const dir = tempDir('skillpin-config-');
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(file, text);
  return file;
}

function errorOf(text: string, env: NodeJS.ProcessEnv = {}): string {
  const file = configFile(text);
  try {
    loadConfig(file, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(file, '<file>');
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('resolves paths against the config file and applies defaults', () => {
    const file = configFile(
      `sources:\n  - id: local\n    path: ./repo\n    ref: HEAD\n  - id: remote.one\n    url: https://example.invalid/r.git\n    commit: ${C}\n    paths: [skills/, ./more]\n    token: \${TOKEN}\n`,
    );
    const config = loadConfig(file, { TOKEN: 's3cret' });
    const dir = path.dirname(file);
    expect(config).toEqual({
      file,
      dataDir: path.join(dir, '.skillpin'),
      pageSize: 100,
      tools: true,
      prompts: true,
      cache: { ttlMs: 60_000, cacheScope: 'private' },
      http: {},
      sync: {
        concurrency: 4,
        timeoutMs: 30_000,
        deadlineMs: 600_000,
        maxFetchBytes: 1024 ** 3,
        redirects: 'follow',
        retryMinMs: 5000,
        retryMaxMs: 600_000,
      },
      git: { backend: 'auto' },
      sources: [
        {
          id: 'local',
          location: { kind: 'local', path: path.join(dir, 'repo') },
          target: { kind: 'ref', ref: 'HEAD' },
          paths: [],
          strictNames: false,
          pollMs: 300_000,
          keep: 2,
          timeoutMs: 30_000,
          deadlineMs: 600_000,
          maxFetchBytes: 1024 ** 3,
          redirects: 'follow',
          git: { backend: 'auto' },
        },
        {
          id: 'remote.one',
          location: { kind: 'remote', url: 'https://example.invalid/r.git', token: 's3cret' },
          target: { kind: 'commit', commit: C },
          paths: ['skills', 'more'],
          strictNames: false,
          keep: 2,
          timeoutMs: 30_000,
          deadlineMs: 600_000,
          maxFetchBytes: 1024 ** 3,
          redirects: 'follow',
          git: { backend: 'auto' },
        },
      ],
    });
  });

  it.each([
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n    comit: 1\n',
      '<file>: sources[0]: unknown key "comit"',
    ],
    ['dataDirr: x\nsources: []\n', '<file>: (top level): unknown key "dataDirr"'],
    ['sources: []\n', '<file>: sources: configure at least one source'],
    [
      'sources:\n  - id: Bad_Id\n    path: x\n    ref: HEAD\n',
      '<file>: sources[0].id: must be lowercase letters, digits, "-" and "." (an RFC 3986 reg-name), at most 64 characters',
    ],
    ['sources:\n  - id: a\n    path: x\n', '<file>: sources[0]: give exactly one of commit or ref'],
    [
      'sources:\n  - id: a\n    path: x\n    url: https://h/r.git\n    ref: main\n',
      '<file>: sources[0]: give exactly one of github, gitlab, url or path',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    commit: abc\n',
      '<file>: sources[0].commit: must be a full 40-hex commit SHA (lowercase)',
    ],
    [
      'sources:\n  - id: a\n    url: ftp://h/r.git\n    ref: main\n',
      '<file>: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      'sources:\n  - id: a\n    url: https://me:pw@h/r.git\n    ref: main\n',
      '<file>: sources[0].url: must not carry credentials; use token: ${ENV_NAME} or credentialHelper',
    ],
    [
      'sources:\n  - id: a\n    url: https://h/r.git\n    ref: main\n    token: ghp_literal\n',
      '<file>: sources[0].token: must be an environment reference like ${MY_TOKEN}; secrets are never written in the config',
    ],
    [
      'sources:\n  - id: a\n    url: https://h/r.git\n    ref: main\n    token: ${NOPE}\n',
      '<file>: sources[0].token: environment variable NOPE is not set',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n  - id: a\n    path: y\n    ref: HEAD\n',
      '<file>: sources[1].id: "a" is used by another source',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n    paths: [../up]\n',
      '<file>: sources[0].paths[0]: must be a folder inside the repository (relative, no "..")',
    ],
    [
      `sources:\n  - id: a\n    path: x\n    commit: ${C}\n    poll: 5m\n`,
      '<file>: sources[0].poll: poll only applies to a source that tracks a ref (a pinned commit never moves)',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: main\n    poll: 5 minutes\n',
      '<file>: sources[0].poll: must be a duration like 250ms, 30s, 5m or 1h',
    ],
    [
      'sync:\n  poll: 10ms\nsources:\n  - id: a\n    path: x\n    ref: main\n',
      '<file>: sync.poll: poll must be at least 1000 ms',
    ],
    [
      'webhook:\n  secret: plain\nsources:\n  - id: a\n    path: x\n    ref: main\n',
      '<file>: webhook.secret: must be an environment reference like ${WEBHOOK_SECRET}; secrets are never written in the config',
    ],
    [
      'sources: [\n',
      '<file>: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ],
  ])('refuses %j with one message naming the key', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('names a file that cannot be read', () => {
    expect(() => loadConfig('/nonexistent/skillpin.yaml')).toThrow(
      '/nonexistent/skillpin.yaml: cannot be read (ENOENT)',
    );
  });
});

describe('the git section and remotes beyond HTTP', () => {
  const source = (extra: string) => `sources:\n  - id: a\n    ref: main\n${extra}`;

  it('takes ssh://, user@host:path and file:// remotes, and a credential helper for HTTP(S)', () => {
    const urls = ['ssh://git@host.example/org/r.git', 'git@host.example:org/r.git', 'file:///srv/r.git'];
    for (const url of urls) {
      const config = loadConfig(configFile(source(`    url: ${url}\n`)), {});
      expect(config.sources[0]!.location).toEqual({ kind: 'remote', url });
    }
    const helped = loadConfig(
      configFile(source('    url: https://h.example/r.git\n    credentialHelper: store --file /etc/creds\n')),
      {},
    );
    expect(helped.sources[0]!.location).toEqual({
      kind: 'remote',
      url: 'https://h.example/r.git',
      credentialHelper: 'store --file /etc/creds',
    });
  });

  it.each([
    [
      '    url: -oProxyCommand=x:r.git\n',
      '<file>: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      '    url: ssh://-oProxyCommand=x/r.git\n',
      '<file>: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      '    url: ssh://git:pw@h/r.git\n',
      '<file>: sources[0].url: must not carry credentials; use token: ${ENV_NAME} or credentialHelper',
    ],
    [
      '    url: git@h:r.git\n    token: ${T}\n',
      '<file>: sources[0].token: token only applies to an http(s) url, github or gitlab source',
    ],
    [
      '    url: https://h/r.git\n    token: ${T}\n    credentialHelper: cache\n',
      '<file>: sources[0]: give token or credentialHelper, not both',
    ],
  ])('refuses %j', (extra, message) => {
    expect(errorOf(source(extra), { T: 't' })).toBe(message);
  });

  it('picks the backend from git.backend, else SKILLPIN_GIT_BACKEND, else auto; resolves a proxy reference', () => {
    const remote = source('    url: https://h.example/r.git\n');
    expect(loadConfig(configFile(remote), {}).git).toEqual({ backend: 'auto' });
    expect(loadConfig(configFile(remote), { SKILLPIN_GIT_BACKEND: 'isomorphic' }).git).toEqual({
      backend: 'isomorphic',
    });
    const chosen = loadConfig(configFile(`git:\n  backend: cli\n  proxy: \${PROXY}\n${remote}`), {
      SKILLPIN_GIT_BACKEND: 'isomorphic',
      PROXY: 'http://u:p@proxy.example:3128',
    });
    expect(chosen.git).toEqual({ backend: 'cli', proxy: 'http://u:p@proxy.example:3128' });
    expect(chosen.sources[0]!.git).toEqual(chosen.git);
    expect(errorOf(remote, { SKILLPIN_GIT_BACKEND: 'jgit' })).toBe(
      'SKILLPIN_GIT_BACKEND: must be one of auto, cli, isomorphic, not "jgit"',
    );
    expect(errorOf(`git:\n  proxy: http://u:p@proxy.example:3128\n${remote}`)).toBe(
      '<file>: git.proxy: must be a proxy URL without credentials, or an environment reference like ${HTTPS_PROXY_URL}',
    );
  });
});

describe('short source names, signatures and the lockfile', () => {
  it('expands github: and gitlab: (nested groups too) to https clone URLs that take a token', () => {
    const config = loadConfig(
      configFile(
        'sources:\n  - id: a\n    github: anthropics/skills\n    ref: main\n    token: ${T}\n' +
          '  - id: b\n    gitlab: acme/platform/policies\n    ref: main\n',
      ),
      { T: 't' },
    );
    expect(config.sources.map((s) => s.location)).toEqual([
      { kind: 'remote', url: 'https://github.com/anthropics/skills.git', token: 't' },
      { kind: 'remote', url: 'https://gitlab.com/acme/platform/policies.git' },
    ]);
  });

  it.each([
    [
      '    url: https://github.com/acme/skills/tree/main/skills/pdf\n',
      '<file>: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    github: acme/skills\n    ref: main\n    paths: [skills/pdf]',
    ],
    [
      '    url: https://gitlab.com/acme/platform/policies/-/tree/v2?ref_type=tags\n',
      '<file>: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    gitlab: acme/platform/policies\n    ref: v2',
    ],
    [
      '    url: https://git.example.com/team/skills/-/tree/main/docs\n',
      '<file>: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    url: https://git.example.com/team/skills.git\n    ref: main\n    paths: [docs]',
    ],
    [
      '    github: not/a/repo\n',
      '<file>: sources[0].github: must be owner/repo, as in github.com/owner/repo',
    ],
    [
      '    github: a/b\n    url: https://h/r.git\n',
      '<file>: sources[0]: give exactly one of github, gitlab, url or path',
    ],
    [
      '    path: x\n    verify: {}\n',
      '<file>: sources[0].verify: give sshAllowedSigners, gpgKeys or both: the keys a signature must verify against',
    ],
    [
      '    path: x\n    verify: {gpgKeys: [k.asc], require: release}\n',
      '<file>: sources[0].verify.require: Invalid option: expected one of "commit"|"tag"',
    ],
    [
      '    path: x\n    verify: {sshAllowedSigners: missing_signers}\n',
      '<file>: sources[0].verify.sshAllowedSigners (missing_signers): cannot be read (ENOENT)',
    ],
  ])('refuses %j', (extra, message) => {
    expect(errorOf(`sources:\n  - id: a\n    ref: main\n${extra}`)).toBe(message);
  });

  it('refuses require: tag on a pinned commit: the tag it verifies is the one ref names', () => {
    expect(
      errorOf(
        `sources:\n  - id: a\n    path: x\n    commit: ${C}\n    verify: {gpgKeys: [k], require: tag}\n`,
      ),
    ).toBe(
      '<file>: sources[0].verify.require: require: tag verifies the annotated tag that ref names; give ref: <tag>',
    );
  });

  it('reads the key files of verify: relative to the config, and resolves lock:', () => {
    const file = configFile(
      'lock: pins/skillpin.lock\nsources:\n  - id: a\n    path: x\n    ref: v1\n' +
        '    verify:\n      sshAllowedSigners: signers\n      gpgKeys: [k1.asc, k2.asc]\n      require: tag\n',
    );
    const dir = path.dirname(file);
    writeFileSync(path.join(dir, 'signers'), 'signers text');
    writeFileSync(path.join(dir, 'k1.asc'), 'key one');
    writeFileSync(path.join(dir, 'k2.asc'), 'key two');
    const config = loadConfig(file, {});
    expect(config.lock).toBe(path.join(dir, 'pins', 'skillpin.lock'));
    expect(config.sources[0]!.verify).toEqual({
      require: 'tag',
      sshAllowedSigners: {
        label: `${file}: sources[0].verify.sshAllowedSigners (signers)`,
        text: 'signers text',
      },
      gpgKeys: [
        { label: `${file}: sources[0].verify.gpgKeys[0] (k1.asc)`, text: 'key one' },
        { label: `${file}: sources[0].verify.gpgKeys[1] (k2.asc)`, text: 'key two' },
      ],
    });
  });
});
