/**
 * Waits for an observable condition: polls `probe` until it gives something other than `undefined` or `false`,
 * and resolves to that. Fails naming `what` after `timeoutMs`.
 */
export async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  timeoutMs = 15_000,
): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
