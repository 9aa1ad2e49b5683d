import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from '../../mcp/caller.ts';
import type { AuthReason } from '../../shared/reasons.ts';

/** An authenticated request: who, and the AuthInfo the SDK hands the server factory. */
export interface Authenticated {
  caller: Caller;
  authInfo: AuthInfo;
}

/** Why a token was refused: a stable reason and a sentence for the client (never the token). */
export interface Refused {
  reason: AuthReason;
  description: string;
}

export type Verdict = ({ ok: true } & Authenticated) | ({ ok: false } & Refused);

export const refuse = (reason: AuthReason, description: string): Verdict => ({
  ok: false,
  reason,
  description,
});
