import { MAX_STREAM_BYTES } from '../../run/limits.ts';
import type { PlannedScript } from '../../run/plan.ts';
import type { WillRun } from '../../run/preview.ts';
import type { RunOutcome } from '../../run/execute.ts';
import type { RunRefusal } from '../../run/plan.ts';

/** The preview, one fact a line: what a person approves. */
export function renderWillRun(willRun: WillRun): string {
  const lines = [
    `skill: ${willRun.skill} of source "${willRun.source}" at commit ${willRun.commit}`,
    `script: ${willRun.script} (${willRun.digest})`,
    `interpreter: ${willRun.interpreter} (${willRun.interpreterPath})`,
    `argv: ${JSON.stringify(willRun.argv)}`,
    `cwd: ${willRun.cwd} (the skill's files at that commit, read-only)`,
    `timeout: ${willRun.timeoutMs / 1000} s`,
    `environment: ${willRun.envNames.join(', ') || '(none)'}`,
  ];
  if (willRun.envNotSet !== undefined)
    lines.push(
      `granted but not set on the server (the script will not get them): ${willRun.envNotSet.join(', ')}`,
    );
  if (willRun.egress !== undefined)
    lines.push(`hosts the skill says it reaches (not enforced): ${willRun.egress.join(', ')}`);
  return lines.join('\n');
}

/** The first call's answer: nothing ran; who approves depends on the confirm mode. */
export function renderConfirmation(
  willRun: WillRun,
  token: string,
  expiresAt: string,
  mode: 'ask-user' | 'auto',
): string {
  const ask =
    mode === 'ask-user'
      ? 'Show the user this preview and ask whether to run it. Only if the user approves, call skill_run again'
      : 'If this is the run you intend, call skill_run again';
  return [
    'Confirmation required: nothing has run yet. This would run:',
    renderWillRun(willRun),
    '',
    `${ask} with the same arguments and confirmToken "${token}" (good for one run, until ${expiresAt}).`,
  ].join('\n');
}

// One block per stream; a stream's own final newline is not doubled.
const fence = (name: string, text: string) =>
  text === '' ? `--- ${name} ---` : `--- ${name} ---\n${text.replace(/\n$/, '')}`;

export function renderOutcome(willRun: WillRun, outcome: RunOutcome): string {
  const end =
    outcome.exitCode !== null
      ? `exit code ${outcome.exitCode}`
      : `ended by ${outcome.signal ?? 'the deadline'}`;
  const notes = [
    outcome.timedOut && `timed out after ${willRun.timeoutMs / 1000} s`,
    outcome.cancelled && 'cancelled by the client',
    outcome.truncated && `output cut at ${MAX_STREAM_BYTES / (1024 * 1024)} MiB per stream`,
  ].filter((note): note is string => note !== false);
  return [
    `Ran ${willRun.script} of ${willRun.skill} (source "${willRun.source}", commit ${willRun.commit}): ${end} in ${outcome.durationMs} ms${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`,
    fence('stdout', outcome.stdout),
    fence('stderr', outcome.stderr),
  ].join('\n');
}

export function renderRefusal(refusal: RunRefusal): string {
  return `skill_run did not run anything: ${refusal.code}${refusal.reason === undefined ? '' : ` (${refusal.reason})`}: ${refusal.detail}`;
}

/** skill_list's line about a skill's declared scripts, or `undefined` when it declares none. */
export function renderScripts(scripts: readonly PlannedScript[] | undefined): string | undefined {
  if (scripts === undefined || scripts.length === 0) return undefined;
  const states = scripts.map(({ declared, status }) => {
    if (status.state === 'runnable') return `${declared.script} (runnable with skill_run)`;
    if (status.state === 'not-granted') return `${declared.script} (declared, not granted)`;
    return `${declared.script} (unavailable: ${status.reason})`;
  });
  return `  scripts: ${states.join('; ')}`;
}
