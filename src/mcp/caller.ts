import type { AuthInfo, McpRequestContext } from '@modelcontextprotocol/server';
import { EVERY_SOURCE, onlySources, type Visibility } from '../catalog/index.ts';

/** Who sent a request, as authentication established it, and what it may see. */
export interface Caller {
  /** `token:<name>` for a static token, `oauth:<subject>` for a JWT: logs name it, sessions belong to it. */
  readonly id: string;
  readonly visibility: Visibility;
}

/** Where the caller travels in the SDK's AuthInfo (pass-through: the SDK hands it to the server factory). */
const CALLER_KEY = 'dev.skillpin/caller';

const NOTHING = onlySources([]);

/** The AuthInfo the HTTP layer hands the SDK for an authenticated caller. */
export function authInfoFor(
  caller: Caller,
  token: { value: string; clientId: string; scopes: readonly string[]; expiresAt?: number },
): AuthInfo {
  return {
    token: token.value,
    clientId: token.clientId,
    scopes: [...token.scopes],
    expiresAt: token.expiresAt,
    extra: { [CALLER_KEY]: caller },
  };
}

/** The authenticated caller of `authInfo`, if the HTTP layer put one there. */
export function callerOf(authInfo: AuthInfo | undefined): Caller | undefined {
  const caller = authInfo?.extra?.[CALLER_KEY];
  return caller === undefined ? undefined : (caller as Caller);
}

/**
 * Who is asking, for what is bound to one caller (skill_run's confirmations): the principal over authenticated
 * HTTP; every unauthenticated HTTP caller is one; over stdio, the process at the other end.
 */
export function principalOf(
  context: Pick<McpRequestContext, 'authInfo' | 'requestInfo'> | undefined,
): string {
  if (context?.requestInfo === undefined) return 'stdio';
  if (context.authInfo === undefined) return 'http';
  return callerOf(context.authInfo)?.id ?? 'unidentified';
}

/**
 * What a request may see. No authInfo: stdio, or HTTP without auth, sees every source. AuthInfo the HTTP layer
 * did not make (no caller in it) sees nothing: a gap in the wiring fails closed.
 */
export function visibilityOf(context: Pick<McpRequestContext, 'authInfo'> | undefined): Visibility {
  if (context?.authInfo === undefined) return EVERY_SOURCE;
  return callerOf(context.authInfo)?.visibility ?? NOTHING;
}
