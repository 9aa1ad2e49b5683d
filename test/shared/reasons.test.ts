import { describe, expect, expectTypeOf, it } from 'vitest';
import type { WebhookOutcome } from '../../src/http/webhooks.ts';
import type { RunRefusal } from '../../src/run/plan.ts';
import type { TokenRefusal } from '../../src/run/tokens.ts';
import {
  isProblemReason,
  isSourceReason,
  type ProblemReason,
  problem,
  REASONS,
  type ReasonKind,
} from '../../src/shared/reasons.ts';

const entries = Object.entries(REASONS) as Array<[string, (typeof REASONS)[keyof typeof REASONS]]>;
const codesOf = (kind: ReasonKind) =>
  entries.filter(([, entry]) => entry.kind === kind).map(([code]) => code);

describe('the reason registry', () => {
  it('spells every code in kebab-case, with a sentence', () => {
    expect(entries.filter(([code]) => !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(code))).toEqual([]);
    expect(entries.filter(([, { summary }]) => summary.length < 20)).toEqual([]);
  });

  it('names the kind of a whole source, a request, a run, a webhook delivery and a publication by its prefix, and no other', () => {
    const prefixes: Array<[ReasonKind, string]> = [
      ['source', 'source-'],
      ['request', 'auth-'],
      ['run', 'run-'],
      ['webhook', 'webhook-'],
      ['publication', 'publication-'],
    ];
    for (const [kind, prefix] of prefixes)
      expect(entries.filter(([code]) => code.startsWith(prefix)).map(([code]) => code)).toEqual(
        codesOf(kind),
      );
  });

  it("holds skill_run's refusals, the webhook outcomes and the dataDir's files with those of skills, files and sources", () => {
    expect(codesOf('run')).toEqual([
      'run-skill-not-found',
      'run-not-declared',
      'run-not-granted',
      'run-unavailable',
      'run-args-invalid',
      'run-confirmation-unavailable',
      'run-token-invalid',
      'run-token-expired',
      'run-token-reused',
      'run-token-other-caller',
      'run-preview-changed',
      'run-busy',
      'run-failed',
      'run-cancelled',
      'run-user-unavailable',
    ]);
    expect(codesOf('webhook')).toEqual([
      'webhook-triggered',
      'webhook-ignored',
      'webhook-ping',
      'webhook-replayed',
      'webhook-unauthorized',
      'webhook-invalid',
      'webhook-too-large',
    ]);
    expect(codesOf('publication')).toEqual([
      'publication-unsigned',
      'publication-forged',
      'publication-stale',
      'publication-replayed',
      'publication-backward',
      'publication-tag-moved',
    ]);
    expect(codesOf('datadir')).toEqual([
      'datadir-file-oversized',
      'datadir-file-not-regular',
      'datadir-file-damaged',
      'lease-holder-gone',
      'lease-not-renewed',
    ]);
    expect(entries.length).toBe(107);
  });

  it("gives severity info only to a skill reached through a link and a webhook delivery that was not refused; a run's refusal is an error", () => {
    expect(entries.filter(([, entry]) => entry.severity === 'info').map(([code]) => code)).toEqual([
      'skill-alias',
      'webhook-triggered',
      'webhook-ignored',
      'webhook-ping',
      'webhook-replayed',
    ]);
    expect(new Set(codesOf('run').map((code) => REASONS[code as keyof typeof REASONS].severity))).toEqual(
      new Set(['error']),
    );
  });

  it("tells a commit's problems and a source's failures from the other codes", () => {
    expect(
      ['name-mismatch', 'symlink-loop', 'paths-not-found', 'ref-id-invalid', 'grant'].map(isProblemReason),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['source-timeout', 'auth-missing', 'run-busy', 'webhook-invalid', 'nope'].map(isProblemReason),
    ).toEqual([false, false, false, false, false]);
    expect(['source-timeout', 'name-mismatch', 'run-failed', 'toString'].map(isSourceReason)).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it('builds a problem with the severity the registry gives its code', () => {
    expect(problem('skills/a', 'name-mismatch', 'served as b', 3)).toEqual({
      path: 'skills/a',
      reason: 'name-mismatch',
      severity: 'warning',
      detail: 'served as b',
      line: 3,
    });
    expect(problem('skills/a', 'too-large', '17 MiB').severity).toBe('error');
  });

  it('compiles only registered codes where a run refusal or a webhook outcome is expected (checked by tsc)', () => {
    expectTypeOf<'run-busy'>().toExtend<RunRefusal['code']>();
    expectTypeOf<'RUN_BUSY'>().not.toExtend<RunRefusal['code']>();
    expectTypeOf<'grant'>().not.toExtend<RunRefusal['code']>();
    expectTypeOf<'run-preview-changed'>().toExtend<TokenRefusal['code']>();
    expectTypeOf<'run-busy'>().not.toExtend<TokenRefusal['code']>();
    expectTypeOf<'webhook-too-large'>().toExtend<WebhookOutcome>();
    expectTypeOf<'too_large'>().not.toExtend<WebhookOutcome>();
    expectTypeOf<'run-failed'>().not.toExtend<ProblemReason>();
  });
});
