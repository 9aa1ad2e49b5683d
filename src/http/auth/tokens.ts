import { EVERY_SOURCE, onlySources } from '../../catalog/index.ts';
import type { TokenPrincipal } from '../../config/index.ts';
import { authInfoFor, type Caller } from '../../mcp/caller.ts';
import { sameSecret } from '../secrets.ts';
import type { Authenticated } from './verdict.ts';

/**
 * The principal a static bearer token names, or `undefined`. Every configured token is compared, each through
 * both sides' SHA-256 in constant time, so neither which token matched nor any token's length shows in the time.
 */
export function staticTokens(
  principals: readonly TokenPrincipal[],
): (token: string) => Authenticated | undefined {
  const known = principals.map((principal) => ({
    principal,
    caller: {
      id: `token:${principal.name}`,
      visibility: principal.sources === undefined ? EVERY_SOURCE : onlySources(principal.sources),
    } satisfies Caller,
  }));
  return (token) => {
    let found: (typeof known)[number] | undefined;
    for (const entry of known) if (sameSecret(token, entry.principal.token)) found = entry;
    if (found === undefined) return undefined;
    return {
      caller: found.caller,
      authInfo: authInfoFor(found.caller, { value: token, clientId: found.principal.name, scopes: [] }),
    };
  };
}
