import { describe, expect, it } from 'vitest';
import { EVERY_SOURCE, onlySources } from '../../src/catalog/index.ts';
import { authInfoFor, callerOf, visibilityOf } from '../../src/mcp/caller.ts';

describe('the caller a server is made for', () => {
  const caller = { id: 'token:ci', visibility: onlySources(['policies']) };

  it('sees every source without authInfo (stdio, HTTP without auth)', () => {
    expect(visibilityOf(undefined)).toBe(EVERY_SOURCE);
    expect(visibilityOf({})).toBe(EVERY_SOURCE);
  });

  it('sees what the HTTP layer put in authInfo', () => {
    const authInfo = authInfoFor(caller, { value: 't', clientId: 'ci', scopes: ['a'], expiresAt: 5 });
    expect(authInfo).toEqual({
      token: 't',
      clientId: 'ci',
      scopes: ['a'],
      expiresAt: 5,
      extra: { 'dev.skillpin/caller': caller },
    });
    expect(callerOf(authInfo)).toBe(caller);
    expect(visibilityOf({ authInfo })).toBe(caller.visibility);
  });

  it('sees nothing with authInfo the HTTP layer did not make: a gap in the wiring fails closed', () => {
    const visibility = visibilityOf({ authInfo: { token: 't', clientId: 'c', scopes: [] } });
    expect([visibility.all, visibility.key, visibility.has('policies')]).toEqual([false, '', false]);
  });
});
