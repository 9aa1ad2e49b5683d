import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig, MIN_TOKEN_LENGTH } from '../../src/config/index.ts';
import { tempDir } from '../helpers/temp.ts';

const SOURCES =
  'sources:\n  - id: policies\n    path: ./p\n    ref: HEAD\n  - id: public\n    path: ./q\n    ref: HEAD\n';
const ENV = { CI_TOKEN: 'ci-0123456789abcdef', OPS_TOKEN: 'ops-0123456789abcdef' };

function load(auth: string, env: NodeJS.ProcessEnv = ENV) {
  const dir = tempDir('skillpin-auth-config-');
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(file, `auth:\n${auth}${SOURCES}`);
  return { file, load: () => loadConfig(file, env) };
}

function errorOf(auth: string, env: NodeJS.ProcessEnv = ENV): string {
  const { file, load: run } = load(auth, env);
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(file, '<file>');
  }
  throw new Error('expected a ConfigError');
}

const OAUTH = `  oauth:
    issuer: https://login.example.com
    audience: https://skills.example.com/mcp
    scopes:
      skills:read: '*'
      skills:policies: [policies]
`;

describe('auth: in the config', () => {
  it('resolves tokens from the environment and keeps the OAuth settings as written', () => {
    const config = load(
      `  tokens:\n    - name: ci\n      token: \${CI_TOKEN}\n      sources: [policies]\n    - name: ops\n      token: \${OPS_TOKEN}\n${OAUTH}`,
    ).load();
    expect(config.auth).toEqual({
      tokens: [
        { name: 'ci', token: ENV.CI_TOKEN, sources: ['policies'] },
        { name: 'ops', token: ENV.OPS_TOKEN },
      ],
      oauth: {
        issuer: 'https://login.example.com',
        audience: 'https://skills.example.com/mcp',
        scopes: { 'skills:read': '*', 'skills:policies': ['policies'] },
      },
    });
  });

  it('makes every source private: each caller gets answers of its own', () => {
    const config = load(`  tokens:\n    - name: ci\n      token: \${CI_TOKEN}\n`).load();
    expect(config.sources.map((source) => [source.id, source.cacheScope])).toEqual([
      ['policies', 'private'],
      ['public', 'private'],
    ]);
  });

  it('refuses a source that says cacheScope: public, saying why', () => {
    const dir = tempDir('skillpin-auth-config-');
    const file = path.join(dir, 'skillpin.yaml');
    writeFileSync(
      file,
      'auth:\n  tokens:\n    - name: ci\n      token: ${CI_TOKEN}\n' +
        'sources:\n  - id: open\n    path: ./p\n    ref: HEAD\n    cacheScope: public\n',
    );
    expect(() => loadConfig(file, ENV)).toThrow(
      `${file}:9:17: sources[0].cacheScope: cannot be public while auth: is configured: each caller gets answers ` +
        'of its own, which a shared cache must not hand to another',
    );
  });

  it('is absent when not configured', () => {
    const dir = tempDir('skillpin-auth-config-');
    const file = path.join(dir, 'skillpin.yaml');
    writeFileSync(file, SOURCES);
    expect('auth' in loadConfig(file, {})).toBe(false);
  });

  it('refuses a literal token, an unset variable and a short token, never printing the value', () => {
    expect(errorOf('  tokens:\n    - name: ci\n      token: hunter2-hunter2-hunter2\n')).toBe(
      '<file>:4:14: auth.tokens[0].token: must be an environment reference like ${SKILLPIN_CI_TOKEN}; secrets are never written in the config',
    );
    expect(errorOf('  tokens:\n    - name: ci\n      token: ${MISSING}\n')).toBe(
      '<file>:4:14: auth.tokens[0].token: environment variable MISSING is not set',
    );
    expect(MIN_TOKEN_LENGTH).toBe(16);
    const short = errorOf('  tokens:\n    - name: ci\n      token: ${SHORT}\n', { SHORT: 'abc123abc123abc' });
    expect(short).toBe(
      '<file>:4:14: auth.tokens[0].token: the token is shorter than 16 characters; use a random one (openssl rand -hex 32)',
    );
    expect(short).not.toContain('abc123');
  });

  it('refuses two principals with one name or one token, and sources that are not configured', () => {
    expect(
      errorOf(
        '  tokens:\n    - name: ci\n      token: ${CI_TOKEN}\n    - name: ci\n      token: ${OPS_TOKEN}\n',
      ),
    ).toBe('<file>:5:13: auth.tokens[1].name: "ci" is used by auth.tokens[0]');
    expect(
      errorOf(
        '  tokens:\n    - name: ci\n      token: ${CI_TOKEN}\n    - name: ops\n      token: ${SAME}\n',
        {
          ...ENV,
          SAME: ENV.CI_TOKEN,
        },
      ),
    ).toBe('<file>:6:14: auth.tokens[1].token: holds the same token as auth.tokens[0]');
    expect(errorOf('  tokens:\n    - name: ci\n      token: ${CI_TOKEN}\n      sources: [private]\n')).toBe(
      '<file>:5:17: auth.tokens[0].sources[0]: no source "private" is configured',
    );
    expect(errorOf(OAUTH.replace('[policies]', '[policies, secret]'))).toBe(
      '<file>:7:35: auth.oauth.scopes.skills:policies[1]: no source "secret" is configured',
    );
  });

  it('refuses an empty auth block, an insecure issuer, an audience that is no URL and no scopes', () => {
    expect(errorOf('  {}\n')).toBe('<file>:2:3: auth: give tokens, oauth or both');
    expect(errorOf(OAUTH.replace('https://login.example.com', 'http://login.example.com'))).toBe(
      '<file>:3:13: auth.oauth.issuer: must be an https:// URL (http:// only for a loopback host)',
    );
    // A local identity provider over http on loopback is fine.
    expect(
      load(OAUTH.replace('https://login.example.com', 'http://127.0.0.1:8080')).load().auth?.oauth?.issuer,
    ).toBe('http://127.0.0.1:8080');
    expect(errorOf(OAUTH.replace('https://skills.example.com/mcp', 'skills'))).toBe(
      '<file>:4:15: auth.oauth.audience: must be the URL clients reach this server at, e.g. https://skills.example.com/mcp (RFC 8707)',
    );
    expect(
      errorOf(
        '  oauth:\n    issuer: https://login.example.com\n    audience: https://s.example.com/mcp\n    scopes: {}\n',
      ),
    ).toBe('<file>:5:13: auth.oauth.scopes: map at least one scope to sources ("*" for every source)');
    expect(errorOf(`${OAUTH}  extra: 1\n`)).toBe('<file>:8:3: auth: unknown key "extra"');
  });

  it('knows which hosts are loopback', () => {
    expect(
      ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'].map(isLoopbackHost),
    ).toEqual([true, true, true, true, true, true]);
    expect(['0.0.0.0', '::', '10.0.0.5', 'example.com', '128.0.0.1', '[::]'].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
