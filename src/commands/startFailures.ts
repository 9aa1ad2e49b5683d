import type { SyncOutcome } from '../shared/status.ts';

/**
 * What `serve` says on stderr, in plain words whatever the log format, when no source synced at its start: each
 * source with its reason code and sentence, what it still serves from dataDir, and what git said. `undefined` when
 * a source synced (or there is none): the log tells the rest.
 */
export function startFailureReport(outcomes: readonly SyncOutcome[]): string | undefined {
  if (outcomes.length === 0 || outcomes.some((outcome) => outcome.ok)) return undefined;
  const lines = outcomes.flatMap((outcome) => {
    if (outcome.ok) return [];
    const serving = outcome.serving === undefined ? '' : `; still serving ${outcome.serving} from dataDir`;
    const said = outcome.cause === undefined ? [] : [`    git: ${outcome.cause}`];
    return [`  ${outcome.id}: ${outcome.reason}: ${outcome.detail}${serving}`, ...said];
  });
  return [
    'skillpin: serving, but no source synced at start; each is tried again, backing off (skillpin status shows them):',
    ...lines,
    '',
  ].join('\n');
}
