import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Equal, compared in constant time over both sides' SHA-256, so not even the secret's length leaks. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** GitHub's `X-Hub-Signature-256` of exactly these bytes: `sha256=` + HMAC-SHA256 in hex. */
export function githubSignature(secret: string, body: Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
