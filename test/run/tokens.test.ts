import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WillRun } from '../../src/run/preview.ts';
import { tokenBook } from '../../src/run/tokens.ts';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);
const preview: WillRun = {
  source: 'team',
  commit: C1,
  skill: 'skills/weather',
  uri: `skill://team/${C1}/skills/weather/SKILL.md`,
  script: 'scripts/forecast.js',
  digest: `sha256:${'1'.repeat(64)}`,
  interpreter: 'node',
  interpreterPath: '/usr/bin/node',
  argv: ['scripts/forecast.js', '--days', '3'],
  cwd: `/data/run/team/${C1}/skills%2Fweather`,
  timeoutMs: 30_000,
  envNames: ['HOME', 'PATH', 'WEATHER_API_KEY'],
};
const SECRET = Buffer.from('test secret');
const CALLER = 'token:alice';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('confirmation tokens', () => {
  it('confirm exactly the preview they were issued for, once', () => {
    const time = clock();
    const book = tokenBook(SECRET, 600_000, time.now);
    const { token, expiresAt } = book.issue(preview, CALLER);
    expect(expiresAt).toBe(1_000_000 + 600_000);
    expect(book.check(token, { ...preview }, CALLER)).toBeUndefined();
    // Checking uses nothing up; spending does.
    expect(book.check(token, preview, CALLER)).toBeUndefined();
    book.spend(token);
    expect(book.check(token, preview, CALLER)).toEqual({
      code: 'run-token-reused',
      detail: 'the confirmToken was used already; each confirms one run',
    });
  });

  it('are an HMAC-SHA256 under the secret over their payload', () => {
    const { token } = tokenBook(SECRET, 1000).issue(preview, CALLER);
    const [prefix, payload, mac] = token.split('.');
    expect(prefix).toBe('skr1');
    expect(mac).toBe(createHmac('sha256', SECRET).update(payload!).digest('base64url'));
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toEqual({
      nonce: expect.stringMatching(/^[\w-]{22}$/),
      expiresAt: expect.any(Number),
      caller: createHash('sha256').update(CALLER).digest('base64url'),
      parts: {
        all: expect.any(String),
        skill: expect.any(String),
        commit: C1,
        script: expect.any(String),
        argv: expect.any(String),
      },
    });
  });

  it.each([
    ['another commit', { commit: C2 }, `the commit (the token is for ${C1}, the skill is now at ${C2})`],
    ['other bytes of the script', { digest: `sha256:${'2'.repeat(64)}` }, 'the script or its bytes'],
    ['another script', { script: 'scripts/other.js' }, 'the script or its bytes'],
    ['other arguments', { argv: ['scripts/forecast.js', '--days', '4'] }, 'the arguments'],
    ['another skill', { skill: 'skills/other' }, 'the skill'],
    [
      'another environment',
      { envNames: ['HOME', 'PATH'] },
      'what the script would get (interpreter, timeout or variables)',
    ],
    [
      'another timeout',
      { timeoutMs: 60_000 },
      'what the script would get (interpreter, timeout or variables)',
    ],
  ])('refuse %s with run-preview-changed, saying what changed', (_what, change, changed) => {
    const book = tokenBook(SECRET, 600_000);
    const { token } = book.issue(preview, CALLER);
    expect(book.check(token, { ...preview, ...change }, CALLER)).toEqual({
      code: 'run-preview-changed',
      detail: `the run differs from the preview the token confirms: ${changed}; nothing ran, ask again for a preview`,
    });
  });

  it('confirm a run for the caller they were issued to alone, and stay good for it', () => {
    const book = tokenBook(SECRET, 600_000);
    const { token } = book.issue(preview, CALLER);
    const other = {
      code: 'run-token-other-caller',
      detail: 'the confirmToken was issued to another caller; nothing ran, ask for a preview of your own',
    };
    expect([book.check(token, preview, 'token:bob'), book.check(token, preview, 'stdio')]).toEqual([
      other,
      other,
    ]);
    expect(book.check(token, preview, CALLER)).toBeUndefined();
  });

  it('expire after their TTL', () => {
    const time = clock();
    const book = tokenBook(SECRET, 600_000, time.now);
    const { token } = book.issue(preview, CALLER);
    time.advance(599_999);
    expect(book.check(token, preview, CALLER)).toBeUndefined();
    time.advance(1);
    expect(book.check(token, preview, CALLER)).toEqual({
      code: 'run-token-expired',
      detail: `the confirmToken expired at ${new Date(1_600_000).toISOString()}; ask again for a preview`,
    });
  });

  it('are refused when not signed by this secret, altered, or not a token at all', () => {
    const { token } = tokenBook(SECRET, 600_000).issue(preview, CALLER);
    const book = tokenBook(Buffer.from('another secret'), 600_000);
    const invalid = { code: 'run-token-invalid', detail: 'the confirmToken is not one this server issued' };
    expect(book.check(token, preview, CALLER)).toEqual(invalid);
    const [prefix, payload, mac] = token.split('.');
    const body = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const longer = Buffer.from(JSON.stringify({ ...body, expiresAt: body.expiresAt + 1e9 })).toString(
      'base64url',
    );
    const same = tokenBook(SECRET, 600_000);
    expect(same.check(`${prefix}.${longer}.${mac}`, preview, CALLER)).toEqual(invalid);
    expect(same.check('skr1.e30.', preview, CALLER)).toEqual(invalid);
    expect(same.check('', preview, CALLER)).toEqual(invalid);
    expect(same.check(`${token}.extra`, preview, CALLER)).toEqual(invalid);
    // Signed, but not a payload this server writes.
    const odd = Buffer.from('{"nonce":1}').toString('base64url');
    const signed = createHmac('sha256', SECRET).update(odd).digest('base64url');
    expect(same.check(`skr1.${odd}.${signed}`, preview, CALLER)).toEqual(invalid);
  });

  it('outlive the process that issued them only with a configured secret', () => {
    const { token } = tokenBook(SECRET, 600_000).issue(preview, CALLER);
    expect(tokenBook(SECRET, 600_000).check(token, preview, CALLER)).toBeUndefined();
    const random = tokenBook(undefined, 600_000).issue(preview, CALLER).token;
    expect(tokenBook(undefined, 600_000).check(random, preview, CALLER)?.code).toBe('run-token-invalid');
  });
});
