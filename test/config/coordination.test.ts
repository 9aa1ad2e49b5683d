import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { tempDir } from '../helpers/temp.ts';

function load(coordination: string, env: NodeJS.ProcessEnv = {}) {
  const dir = tempDir('skillpin-config-');
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(path.join(dir, 'ca.pem'), 'CA TEXT\n');
  writeFileSync(file, `coordination:\n${coordination}\nsources:\n  - id: a\n    path: x\n    ref: HEAD\n`);
  try {
    return { config: loadConfig(file, env) };
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return { error: (error as Error).message.replaceAll(file, '<file>') };
  }
}

const PASSWORD = 'hunter2-redis-password';
const SHARED = 'coordination-shared-secret-4f0e2a';
const REDIS = '  redis: ${REDIS_URL}\n  secret: ${SKILLPIN_COORDINATION_SECRET}';
const ENV = { REDIS_URL: 'redis://cache.internal', SKILLPIN_COORDINATION_SECRET: SHARED };

describe('coordination:', () => {
  it('reads the Redis URL from the environment, with its defaults', () => {
    const { config } = load(REDIS, { ...ENV, REDIS_URL: `redis://:${PASSWORD}@cache.internal:6380/2` });
    expect(config?.coordination).toEqual({
      redis: `redis://:${PASSWORD}@cache.internal:6380/2`,
      endpoint: 'cache.internal:6380',
      secret: SHARED,
      keyPrefix: 'skillpin:',
      connectTimeoutMs: 5000,
      commandTimeoutMs: 2000,
      leaseMs: 30_000,
    });
  });

  it('turns TLS on for rediss://, for tls: true, and reads a CA file', () => {
    const at = (text: string, url: string) =>
      load(text, { ...ENV, REDIS_URL: url }).config?.coordination?.tls;
    expect(at(REDIS, 'rediss://cache.internal')).toEqual({});
    expect(at(`${REDIS}\n  tls: true`, 'redis://cache.internal')).toEqual({});
    expect(at(`${REDIS}\n  tls: {ca: ca.pem}`, 'redis://cache.internal')).toEqual({
      ca: 'CA TEXT\n',
    });
    expect(at(REDIS, 'redis://cache.internal')).toBeUndefined();
  });

  it('refuses a URL written in the config: secrets are environment references only', () => {
    expect(
      load(`  redis: redis://:${PASSWORD}@cache.internal\n  secret: \${SKILLPIN_COORDINATION_SECRET}`, ENV)
        .error,
    ).toBe(
      '<file>:2:10: coordination.redis: must be an environment reference like ${REDIS_URL}; secrets are never written in the config',
    );
  });

  it('refuses a variable that holds no Redis URL without repeating what it holds', () => {
    const { error } = load(REDIS, { ...ENV, REDIS_URL: `http://user:${PASSWORD}@cache.internal` });
    expect(error).toBe(
      '<file>:2:10: coordination.redis: REDIS_URL must hold a redis:// or rediss:// URL with a host (redis://[:password@]host[:port][/db])',
    );
    expect(load(REDIS, { SKILLPIN_COORDINATION_SECRET: SHARED }).error).toBe(
      '<file>:2:10: coordination.redis: environment variable REDIS_URL is not set',
    );
  });

  it('requires a shared secret, from the environment only, long enough, and never repeats it', () => {
    expect(load('  redis: ${REDIS_URL}', ENV).error).toBe(
      '<file>:2:3: coordination.secret: is required with coordination.redis: an environment reference like ${SKILLPIN_COORDINATION_SECRET} holding a secret every replica shares (openssl rand -hex 32); what one replica publishes is signed with it, and anything unsigned is refused',
    );
    expect(load(`  redis: \${REDIS_URL}\n  secret: ${SHARED}`, ENV).error).toBe(
      '<file>:3:11: coordination.secret: must be an environment reference like ${SKILLPIN_COORDINATION_SECRET}; secrets are never written in the config',
    );
    expect(load(REDIS, { REDIS_URL: ENV.REDIS_URL }).error).toBe(
      '<file>:3:11: coordination.secret: environment variable SKILLPIN_COORDINATION_SECRET is not set',
    );
    expect(load(REDIS, { ...ENV, SKILLPIN_COORDINATION_SECRET: 'short-secret' }).error).toBe(
      '<file>:3:11: coordination.secret: the secret is shorter than 16 characters; use a random one (openssl rand -hex 32)',
    );
  });
});
