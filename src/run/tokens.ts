import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ReasonOf } from '../shared/reasons.ts';
import { partsOf, type PreviewParts, type WillRun } from './preview.ts';

/** Why a confirmation token does not confirm this run. */
export type TokenRefusal = {
  code: Extract<ReasonOf<'run'>, `run-token-${string}` | 'run-preview-changed'>;
  detail: string;
};

export interface TokenBook {
  /**
   * A token for exactly this preview, for `caller` alone (caller.ts's principal): an HMAC over both, valid until
   * `expiresAt`, good for one run.
   */
  issue(willRun: WillRun, caller: string): { token: string; expiresAt: number };
  /** Why `token` does not confirm `willRun` for `caller`, or `undefined` when it does (nothing is used up). */
  check(token: string, willRun: WillRun, caller: string): TokenRefusal | undefined;
  /** Uses the token up: a later check of it is run-token-reused. Only after `check` passed. */
  spend(token: string): void;
}

const PREFIX = 'skr1';
const payloadSchema = z.strictObject({
  nonce: z.string().min(16).max(64),
  expiresAt: z.number().int(),
  /** A hash of the caller's principal: a token that leaks does not name whose it is. */
  caller: z.string(),
  parts: z.strictObject({
    all: z.string(),
    skill: z.string(),
    commit: z.string(),
    script: z.string(),
    argv: z.string(),
  }),
});
type Payload = z.infer<typeof payloadSchema>;

const callerHash = (caller: string) => createHash('sha256').update(caller).digest('base64url');

/** What differs between the preview a token was issued for and this one, in words. */
function changes(issued: PreviewParts, now: PreviewParts): string {
  const changed = [
    issued.skill !== now.skill && 'the skill',
    issued.commit !== now.commit &&
      `the commit (the token is for ${issued.commit}, the skill is now at ${now.commit})`,
    issued.script !== now.script && 'the script or its bytes',
    issued.argv !== now.argv && 'the arguments',
  ].filter((text): text is string => text !== false);
  return changed.length > 0
    ? changed.join(', ')
    : 'what the script would get (interpreter, timeout or variables)';
}

/**
 * Confirmation tokens: `skr1.<payload>.<mac>`, the payload naming the preview's hash (and its parts) and an
 * expiry, the MAC an HMAC-SHA256 under `secret`. Spent tokens are remembered until they expire, so each
 * confirms one run (per process: a restart forgets them, and a token outlives one only with a configured secret).
 */
export function tokenBook(
  secret: Buffer | undefined,
  ttlMs: number,
  now: () => number = Date.now,
): TokenBook {
  const key = secret ?? randomBytes(32);
  const spent = new Map<string, number>();
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  const forget = () => {
    for (const [nonce, expiresAt] of spent) if (expiresAt <= now()) spent.delete(nonce);
  };
  const open = (token: string): Payload | undefined => {
    const [prefix, payload, signature, ...rest] = token.split('.');
    if (prefix !== PREFIX || payload === undefined || signature === undefined || rest.length > 0)
      return undefined;
    const given = Buffer.from(signature, 'base64url');
    const expected = mac(payload);
    if (given.byteLength !== expected.byteLength || !timingSafeEqual(given, expected)) return undefined;
    try {
      const parsed = payloadSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    issue(willRun, caller) {
      forget();
      const body: Payload = {
        nonce: randomBytes(16).toString('base64url'),
        expiresAt: now() + ttlMs,
        caller: callerHash(caller),
        parts: partsOf(willRun),
      };
      const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
      return {
        token: `${PREFIX}.${payload}.${mac(payload).toString('base64url')}`,
        expiresAt: body.expiresAt,
      };
    },
    check(token, willRun, caller) {
      const payload = open(token);
      if (payload === undefined)
        return { code: 'run-token-invalid', detail: 'the confirmToken is not one this server issued' };
      forget();
      if (spent.has(payload.nonce))
        return {
          code: 'run-token-reused',
          detail: 'the confirmToken was used already; each confirms one run',
        };
      if (payload.expiresAt <= now())
        return {
          code: 'run-token-expired',
          detail: `the confirmToken expired at ${new Date(payload.expiresAt).toISOString()}; ask again for a preview`,
        };
      if (payload.caller !== callerHash(caller))
        return {
          code: 'run-token-other-caller',
          detail: 'the confirmToken was issued to another caller; nothing ran, ask for a preview of your own',
        };
      const parts = partsOf(willRun);
      if (payload.parts.all !== parts.all)
        return {
          code: 'run-preview-changed',
          detail: `the run differs from the preview the token confirms: ${changes(payload.parts, parts)}; nothing ran, ask again for a preview`,
        };
      return undefined;
    },
    spend(token) {
      const payload = open(token);
      if (payload !== undefined) spent.set(payload.nonce, payload.expiresAt);
    },
  };
}
