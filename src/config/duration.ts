/** `250ms`, `30s`, `5m`, `1h`, `2d`, or parts of them largest first: `1m30s`, `1h30m`, `2d12h`. */
export const DURATION = /^(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_MS = [86_400_000, 3_600_000, 60_000, 1000, 1] as const;
export const DURATION_ADVICE = 'a duration like 30s, 5m, 1m30s, 1h or 2d';

/** "30s", "5m", "1m30s", "2d", "250ms" → milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text);
  if (match === null) throw new Error(`not a duration: ${text}`);
  return UNIT_MS.reduce((sum, unit, index) => sum + Number(match[index + 1] ?? 0) * unit, 0);
}
