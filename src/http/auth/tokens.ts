import { EVERY_SOURCE, onlySources } from '../../catalog/index.ts';
import type { TokenPrincipal } from '../../config/index.ts';
import { authInfoFor, type Caller } from '../../mcp/caller.ts';
import { secretMatcher } from '../secrets.ts';
import type { Authenticated } from './verdict.ts';

/** The principal a static bearer token names, or `undefined`; compared as secrets are (secrets.ts). */
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
  const match = secretMatcher(principals.map((principal) => principal.token));
  return (token) => {
    const found = known[match(token)];
    if (found === undefined) return undefined;
    return {
      caller: found.caller,
      authInfo: authInfoFor(found.caller, { value: token, clientId: found.principal.name, scopes: [] }),
    };
  };
}
