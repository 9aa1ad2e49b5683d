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

describe('coordination:', () => {
  it('reads the Redis URL from the environment, with its defaults', () => {
    const { config } = load('  redis: ${REDIS_URL}', {
      REDIS_URL: `redis://:${PASSWORD}@cache.internal:6380/2`,
    });
    expect(config?.coordination).toEqual({
      redis: `redis://:${PASSWORD}@cache.internal:6380/2`,
      endpoint: 'cache.internal:6380',
      keyPrefix: 'skillpin:',
      connectTimeoutMs: 5000,
      commandTimeoutMs: 2000,
      leaseMs: 30_000,
    });
  });

  it('turns TLS on for rediss://, for tls: true, and reads a CA file', () => {
    const at = (text: string, url: string) => load(text, { REDIS_URL: url }).config?.coordination?.tls;
    expect(at('  redis: ${REDIS_URL}', 'rediss://cache.internal')).toEqual({});
    expect(at('  redis: ${REDIS_URL}\n  tls: true', 'redis://cache.internal')).toEqual({});
    expect(at('  redis: ${REDIS_URL}\n  tls: {ca: ca.pem}', 'redis://cache.internal')).toEqual({
      ca: 'CA TEXT\n',
    });
    expect(at('  redis: ${REDIS_URL}', 'redis://cache.internal')).toBeUndefined();
  });

  it('refuses a URL written in the config: secrets are environment references only', () => {
    expect(load(`  redis: redis://:${PASSWORD}@cache.internal`).error).toBe(
      '<file>:2:10: coordination.redis: must be an environment reference like ${REDIS_URL}; secrets are never written in the config',
    );
  });

  it('refuses a variable that holds no Redis URL without repeating what it holds', () => {
    const { error } = load('  redis: ${REDIS_URL}', { REDIS_URL: `http://user:${PASSWORD}@cache.internal` });
    expect(error).toBe(
      '<file>:2:10: coordination.redis: REDIS_URL must hold a redis:// or rediss:// URL with a host (redis://[:password@]host[:port][/db])',
    );
    expect(load('  redis: ${REDIS_URL}').error).toBe(
      '<file>:2:10: coordination.redis: environment variable REDIS_URL is not set',
    );
  });
});
