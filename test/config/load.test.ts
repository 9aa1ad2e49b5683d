import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import {
  ConfigError,
  DEFAULT_CACHE_TTL,
  DEFAULT_DEADLINE_MS,
  DEFAULT_GIT_MEMORY_BYTES,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
  DEFAULT_PAGE_SIZE,
  loadConfig,
} from '../../src/config/index.ts';

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
    return (error as Error).message.replaceAll(file, '<file>');
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('defaults to the constants mcp/ and git/ fall back on without a config: each default has one value', () => {
    const config = loadConfig(configFile('sources:\n  - id: here\n    path: .\n    ref: HEAD\n'), {});
    expect([
      config.pageSize,
      config.cache,
      config.sync.timeoutMs,
      config.sync.deadlineMs,
      config.sync.maxFetchBytes,
      config.sync.maxFetchObjects,
      config.git.maxMemoryBytes,
    ]).toEqual([
      DEFAULT_PAGE_SIZE,
      DEFAULT_CACHE_TTL,
      DEFAULT_HTTP_TIMEOUT_MS,
      DEFAULT_DEADLINE_MS,
      DEFAULT_MAX_FETCH_BYTES,
      DEFAULT_MAX_FETCH_OBJECTS,
      DEFAULT_GIT_MEMORY_BYTES,
    ]);
  });

  it('resolves paths against the config file and applies defaults', () => {
    const file = configFile(
      `sources:\n  - id: local\n    path: ./repo\n    ref: HEAD\n  - id: remote.one\n    url: https://example.invalid/r.git\n    commit: ${C}\n    paths: [skills/, ./more]\n    token: \${TOKEN}\n`,
    );
    const config = loadConfig(file, { TOKEN: 's3cret' });
    const dir = path.dirname(file);
    expect(config).toEqual({
      file,
      dataDir: path.join(dir, '.skillpin'),
      dataDirFrom: `the default .skillpin beside ${file}`,
      pageSize: 100,
      tools: true,
      prompts: true,
      maxPrompts: 40,
      cache: { listTtlMs: 60_000, pinnedTtlMs: 86_400_000 },
      http: { metrics: false },
      sync: {
        concurrency: 4,
        timeoutMs: 30_000,
        deadlineMs: 600_000,
        maxFetchBytes: 1024 ** 3,
        maxFetchObjects: 2_000_000,
        redirects: 'follow',
        retryMinMs: 5000,
        retryMaxMs: 600_000,
      },
      git: { backend: 'auto', maxMemoryBytes: 1024 ** 3 },
      runs: {
        confirm: 'ask-user',
        elicitation: true,
        tokenTtlMs: 600_000,
        interpreters: ['node'],
        allowUnscrubbed: false,
      },
      sources: [
        {
          id: 'local',
          location: { kind: 'local', path: path.join(dir, 'repo'), given: './repo' },
          target: { kind: 'ref', ref: 'HEAD' },
          paths: [],
          strictNames: false,
          pollMs: 300_000,
          keep: 2,
          timeoutMs: 30_000,
          deadlineMs: 600_000,
          maxFetchBytes: 1024 ** 3,
          maxFetchObjects: 2_000_000,
          redirects: 'follow',
          git: { backend: 'auto', maxMemoryBytes: 1024 ** 3 },
          cacheScope: 'public',
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
          maxFetchObjects: 2_000_000,
          redirects: 'follow',
          git: { backend: 'auto', maxMemoryBytes: 1024 ** 3 },
          cacheScope: 'private',
        },
      ],
    });
  });

  it.each([
    ['    url: https://h/r.git\n', 'public'],
    ['    url: https://h/r.git\n    token: ${T}\n', 'private'],
    ['    url: https://h/r.git\n    credentialHelper: store\n', 'private'],
    ['    url: ssh://git@h/r.git\n', 'private'],
    ['    url: git@h:r.git\n', 'private'],
    ['    path: ./repo\n', 'public'],
    ['    url: https://h/r.git\n    token: ${T}\n    cacheScope: public\n', 'public'],
    ['    path: ./repo\n    cacheScope: private\n', 'private'],
  ])('a source %j is cached as %s: private when fetched with credentials, unless it says', (lines, scope) => {
    const file = configFile(`sources:\n  - id: s\n    ref: main\n${lines}`);
    expect(loadConfig(file, { T: 't' }).sources[0]!.cacheScope).toBe(scope);
  });

  it.each([
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n    comit: 1\n',
      '<file>:5:5: sources[0]: unknown key "comit"; did you mean "commit"?',
    ],
    [
      'dataDirr: x\nsources: []\n',
      '<file>:1:1: unknown key "dataDirr"; did you mean "dataDir"?\n<file>:2:10: sources: configure at least one source',
    ],
    ['sources: []\n', '<file>:1:10: sources: configure at least one source'],
    [
      'sources:\n  - id: Bad_Id\n    path: x\n    ref: HEAD\n',
      '<file>:2:9: sources[0].id: must be lowercase letters, digits, "-" and "." (an RFC 3986 reg-name), at most 64 characters',
    ],
    ['sources:\n  - id: a\n    path: x\n', '<file>:2:5: sources[0]: give exactly one of commit, ref or refs'],
    [
      'sources:\n  - id: a\n    path: x\n    url: https://h/r.git\n    ref: main\n',
      '<file>:2:5: sources[0]: give exactly one of github, gitlab, url or path',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    commit: abc\n',
      '<file>:4:13: sources[0].commit: must be a full 40-hex commit SHA (lowercase)',
    ],
    [
      'sources:\n  - id: a\n    url: ftp://h/r.git\n    ref: main\n',
      '<file>:3:10: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      'sources:\n  - id: a\n    url: https://me:pw@h/r.git\n    ref: main\n',
      '<file>:3:10: sources[0].url: must not carry credentials; use token: ${ENV_NAME} or credentialHelper',
    ],
    [
      'sources:\n  - id: a\n    url: https://h/r.git\n    ref: main\n    token: ghp_literal\n',
      '<file>:5:12: sources[0].token: must be an environment reference like ${MY_TOKEN}; secrets are never written in the config',
    ],
    [
      'sources:\n  - id: a\n    url: https://h/r.git\n    ref: main\n    token: ${NOPE}\n',
      '<file>:5:12: sources[0].token: environment variable NOPE is not set',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n  - id: a\n    path: y\n    ref: HEAD\n',
      '<file>:5:9: sources[1].id: "a" is used by another source',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: HEAD\n    paths: [../up]\n',
      '<file>:5:13: sources[0].paths[0]: must be a folder inside the repository (relative, no "..")',
    ],
    [
      `sources:\n  - id: a\n    path: x\n    commit: ${C}\n    poll: 5m\n`,
      '<file>:5:11: sources[0].poll: poll only applies to a source that tracks a ref (a pinned commit never moves)',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: main\n    poll: 5 minutes\n',
      '<file>:5:11: sources[0].poll: must be a duration like 30s, 5m, 1m30s, 1h or 2d',
    ],
    [
      'sync:\n  poll: 10ms\nsources:\n  - id: a\n    path: x\n    ref: main\n',
      '<file>:2:9: sync.poll: poll must be at least 1s',
    ],
    [
      'webhook:\n  secret: plain\nsources:\n  - id: a\n    path: x\n    ref: main\n',
      '<file>:2:11: webhook.secret: must be an environment reference like ${WEBHOOK_SECRET}; secrets are never written in the config',
    ],
  ])('refuses %j with one message naming the key', (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  it('reports every problem at once, in plain words, with line and column and the key it most likely meant', () => {
    const text = [
      'datadir: data',
      'source: []',
      'sources:',
      '  - id: a',
      '    path: x',
      '    branch: main',
      '  - id: b',
      '    path: y',
      '    ref: main',
      '    poll: 30',
      '    keep: many',
      '    strictNames: yes',
      '    pathz: [skills]',
      '',
    ].join('\n');
    expect(errorOf(text).split('\n')).toEqual([
      '<file>:1:1: unknown key "datadir"; did you mean "dataDir"?',
      '<file>:2:1: unknown key "source"; did you mean "sources"?',
      '<file>:4:5: sources[0]: give exactly one of commit, ref or refs',
      '<file>:6:5: sources[0]: unknown key "branch"; did you mean "ref"?',
      '<file>:10:11: sources[1].poll: must be a duration like 30s, 5m, 1m30s, 1h or 2d',
      '<file>:11:11: sources[1].keep: must be a number, not "many"',
      '<file>:12:18: sources[1].strictNames: must be true or false, not "yes"',
      '<file>:13:5: sources[1]: unknown key "pathz"; did you mean "paths"?',
    ]);
  });

  it('collects the problems found past the schema too', () => {
    const text =
      'sources:\n  - id: a\n    url: https://h/r.git\n    ref: main\n    token: ${ONE}\n  - id: a\n    path: y\n    ref: main\n';
    expect(errorOf(text).split('\n')).toEqual([
      '<file>:5:12: sources[0].token: environment variable ONE is not set',
      '<file>:6:9: sources[1].id: "a" is used by another source',
    ]);
  });

  it.each([
    ['1m30s', 90_000],
    ['2d', 172_800_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
  ])('takes the duration %s', (poll, ms) => {
    const file = configFile(`sources:\n  - id: a\n    path: x\n    ref: main\n    poll: ${poll}\n`);
    expect(loadConfig(file, {}).sources[0]!.pollMs).toBe(ms);
  });

  it('names a file that cannot be read', () => {
    expect(() => loadConfig('/nonexistent/skillpin.yaml')).toThrow(
      /^\/nonexistent\/skillpin\.yaml: no such file \(ENOENT\)$/,
    );
  });

  it('names the absolute path a relative one was looked for at, and the folder it resolved against', () => {
    const tried = path.resolve('no-such-skillpin.yaml');
    expect(() => loadConfig('no-such-skillpin.yaml')).toThrow(
      `no-such-skillpin.yaml: no such file (ENOENT): looked for ${tried} (a relative path resolves against the current folder, ${process.cwd()})`,
    );
  });
});

describe('YAML mistakes in a config', () => {
  const source = (line: string) => `sources:\n  - id: a\n    path: .\n${line}\n`;
  it.each([
    [
      source('    ref: feature: x'),
      '<file>:4:10: not valid YAML: quote the value: ref: "feature: x" (": " inside a plain value starts a mapping)',
    ],
    [
      source('    ref: @main # the branch'),
      '<file>:4:10: not valid YAML: quote the value: ref: "@main" (a plain value cannot start with @)',
    ],
    [
      source('    ref: `main`'),
      '<file>:4:10: not valid YAML: quote the value: ref: "`main`" (a plain value cannot start with `)',
    ],
    [
      source('    paths: [skills, *]'),
      '<file>:4:21: not valid YAML: quote the value: "*" (a plain value cannot start with *)',
    ],
    [
      source('    ref: %main'),
      '<file>:4:10: not valid YAML: quote the value: ref: "%main" (a plain value cannot start with %)',
    ],
    [
      'sources:\n\t- id: a\n',
      '<file>:2:1: not valid YAML: indent with spaces: YAML does not allow tabs for indentation',
    ],
    [source('    path: b'), '<file>:4:5: not valid YAML: path is given twice in this mapping: keep one'],
    // Where the problem starts: the quote and the bracket that were never closed, not where the file ends.
    [
      'sources:\n  - id: "a\n    path: .\n',
      '<file>:2:9: not valid YAML: this " is never closed: end the value with " on its line',
    ],
    [
      'sources: [\n',
      '<file>:1:10: not valid YAML: close this [ with ] (a list or mapping in brackets ends with its bracket)',
    ],
    [
      source('    paths: [a, b'),
      '<file>:4:12: not valid YAML: close this [ with ] (a list or mapping in brackets ends with its bracket)',
    ],
    [
      'sources:\n  - id: a\n   path: .\n',
      '<file>:3:1: not valid YAML: indent this line as the keys above it (the keys of one mapping start at one column)',
    ],
    // Two errors of the parser for one mistake: one problem, saying what to do.
    [
      'sources:\n  - id: a\n      path: .\n',
      '<file>:2:9: not valid YAML: the line after this value is indented deeper than its key: indent the keys of one mapping alike (or quote a value that goes on)',
    ],
    [
      source('    ref: {{ branch }}'),
      '<file>:4:10: sources[0].ref: must be text, not a mapping: quote the value if it is text starting with {',
    ],
  ])('%j says what to do, at the line where the problem starts', (text, message) => {
    expect(errorOf(text)).toBe(message);
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
      '<file>:4:10: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      '    url: ssh://-oProxyCommand=x/r.git\n',
      '<file>:4:10: sources[0].url: must be an https://, http://, ssh://, file:// or user@host:path URL',
    ],
    [
      '    url: ssh://git:pw@h/r.git\n',
      '<file>:4:10: sources[0].url: must not carry credentials; use token: ${ENV_NAME} or credentialHelper',
    ],
    [
      '    url: git@h:r.git\n    token: ${T}\n',
      '<file>:5:12: sources[0].token: token only applies to an http(s) url, github or gitlab source',
    ],
    [
      '    url: https://h/r.git\n    token: ${T}\n    credentialHelper: cache\n',
      '<file>:2:5: sources[0]: give token or credentialHelper, not both',
    ],
  ])('refuses %j', (extra, message) => {
    expect(errorOf(source(extra), { T: 't' })).toBe(message);
  });

  it('picks the backend from git.backend, else SKILLPIN_GIT_BACKEND, else auto; resolves a proxy reference', () => {
    const remote = source('    url: https://h.example/r.git\n');
    expect(loadConfig(configFile(remote), {}).git).toEqual({ backend: 'auto', maxMemoryBytes: 1024 ** 3 });
    expect(loadConfig(configFile(remote), { SKILLPIN_GIT_BACKEND: 'isomorphic' }).git).toEqual({
      backend: 'isomorphic',
      maxMemoryBytes: 1024 ** 3,
    });
    const chosen = loadConfig(configFile(`git:\n  backend: cli\n  proxy: \${PROXY}\n${remote}`), {
      SKILLPIN_GIT_BACKEND: 'isomorphic',
      PROXY: 'http://u:p@proxy.example:3128',
    });
    expect(chosen.git).toEqual({
      backend: 'cli',
      maxMemoryBytes: 1024 ** 3,
      proxy: 'http://u:p@proxy.example:3128',
    });
    expect(chosen.sources[0]!.git).toEqual(chosen.git);
    expect(errorOf(remote, { SKILLPIN_GIT_BACKEND: 'jgit' })).toBe(
      'SKILLPIN_GIT_BACKEND: must be one of auto, cli, isomorphic, not "jgit"',
    );
    expect(errorOf(`git:\n  proxy: http://u:p@proxy.example:3128\n${remote}`)).toBe(
      '<file>:2:10: git.proxy: must be a proxy URL without credentials, or an environment reference like ${HTTPS_PROXY_URL}',
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
      '<file>:4:10: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    github: acme/skills\n    ref: main\n    paths: [skills/pdf]',
    ],
    [
      '    url: https://gitlab.com/acme/platform/policies/-/tree/v2?ref_type=tags\n',
      '<file>:4:10: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    gitlab: acme/platform/policies\n    ref: v2',
    ],
    [
      '    url: https://git.example.com/team/skills/-/tree/main/docs\n',
      '<file>:4:10: sources[0].url: is the web page of a folder at a ref, not a repository, and where its ref ends and ' +
        'its path begins is ambiguous (a ref may hold "/"); write the source as:\n' +
        '    url: https://git.example.com/team/skills.git\n    ref: main\n    paths: [docs]',
    ],
    [
      '    github: not/a/repo\n',
      '<file>:4:13: sources[0].github: must be owner/repo, as in github.com/owner/repo',
    ],
    [
      '    github: a/b\n    url: https://h/r.git\n',
      '<file>:2:5: sources[0]: give exactly one of github, gitlab, url or path',
    ],
    [
      '    path: x\n    verify: {}\n',
      '<file>:5:13: sources[0].verify: give sshAllowedSigners, gpgKeys or both: the keys a signature must verify against',
    ],
    [
      '    path: x\n    verify: {gpgKeys: [k.asc], require: release}\n',
      '<file>:5:41: sources[0].verify.require: must be one of commit, tag',
    ],
    [
      '    path: x\n    verify: {sshAllowedSigners: missing_signers}\n',
      '<file>:5:33: sources[0].verify.sshAllowedSigners: missing_signers cannot be read (ENOENT)',
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
      '<file>:5:37: sources[0].verify.require: require: tag verifies the annotated tag that ref names; give ref: <tag> or refs: [patterns]',
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

  it('reads refs: with its list and maxRefs: one source following every matching branch and tag', () => {
    const file = configFile(
      'sources:\n  - id: policies\n    path: ./repo\n    refs: ["v*", "refs/heads/release/*"]\n    list: { newest: 2 }\n    maxRefs: 10\n  - id: all\n    path: ./repo\n    refs: ["v*"]\n  - id: one\n    path: ./repo\n    refs: ["v*"]\n    list: newest\n',
    );
    const sources = loadConfig(file).sources;
    expect(sources.map((s) => s.target)).toEqual([
      { kind: 'refs', patterns: ['v*', 'refs/heads/release/*'], newest: 2, maxRefs: 10 },
      { kind: 'refs', patterns: ['v*'], maxRefs: 50 },
      { kind: 'refs', patterns: ['v*'], newest: 1, maxRefs: 50 },
    ]);
    // A refs: source is followed: it polls like a ref.
    expect(sources[1]!.pollMs).toBe(300_000);
  });

  it.each([
    [
      'sources:\n  - id: a\n    path: x\n    ref: main\n    refs: ["v*"]\n',
      '<file>:2:5: sources[0]: give exactly one of commit, ref or refs',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    refs: []\n',
      '<file>:4:11: sources[0].refs: give at least one pattern',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    refs: ["v 1", "a..b", "x:y"]\n',
      [12, 19, 27].map(
        (column, index) =>
          `<file>:4:${column}: sources[0].refs[${index}]: must be a branch or tag name pattern ("v*", "release/*") or a full one ("refs/tags/v*"): no spaces, "..", "~", "^", ":", "?", "[" or "\\"`,
      ),
    ],
    [
      'sources:\n  - id: a\n    path: x\n    ref: main\n    list: newest\n',
      '<file>:5:11: sources[0].list: list only applies to a source that follows refs: [patterns]',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    refs: ["v*"]\n    list: latest\n',
      '<file>:5:11: sources[0].list: must be all, newest, or { newest: N }',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    commit: ' + C + '\n    maxRefs: 5\n',
      '<file>:5:14: sources[0].maxRefs: maxRefs only applies to a source that follows refs: [patterns]',
    ],
    [
      'sources:\n  - id: a\n    path: x\n    refs: ["v*"]\n    maxRefs: 0\n',
      '<file>:5:14: sources[0].maxRefs: must be at least 1',
    ],
  ])('refuses a bad refs: source %j with a named error', (text, expected) => {
    expect(errorOf(text)).toBe([expected].flat().join('\n'));
  });
});
