import { EVERY_SOURCE, onlySources } from '../../catalog/index.ts';
import type { TokenPrincipal } from '../../config/index.ts';
import { authInfoFor, type Caller } from '../../mcp/caller.ts';
import { secretMatcher } from '../secrets.ts';
import type { Authenticated } from './verdict.ts';

/** The principal a static bearer token names, or `undefined`; compared as secrets are (secrets.ts). */
export function staticTokens(
  principals: readonly TokenPrincipal[],
): (token: string) => Authenticated | undefined {
  if (principals.length === 0) return () => undefined;
  // A match means the token is the principal's own: its answer is the same every time, built once and frozen.
  const answers = principals.map((principal): Authenticated => {
    const caller: Caller = Object.freeze({
      id: `token:${principal.name}`,
      visibility: principal.sources === undefined ? EVERY_SOURCE : onlySources(principal.sources),
    });
    const authInfo = authInfoFor(caller, { value: principal.token, clientId: principal.name, scopes: [] });
    Object.freeze(authInfo.scopes);
    return Object.freeze({ caller, authInfo: Object.freeze(authInfo) });
  });
  const match = secretMatcher(principals.map((principal) => principal.token));
  return (token) => answers[match(token)];
}
