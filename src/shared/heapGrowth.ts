import { setFlagsFromString } from 'node:v8';

/**
 * How far past what its last full collection kept (in percent) a serving process lets V8 grow its old generation
 * before collecting again. V8 alone grows it up to 4× on a machine with memory to spare while requests allocate
 * fast; a server keeps little (about 25 MiB for 772 skills), so its RSS after a burst of reads was mostly garbage
 * not yet collected: about 215 MiB, not 135 (docs/serving.md, "Memory").
 */
export const SERVE_HEAP_GROWING_PERCENT = 50;

const OWN_SETTING = /--heap[-_]growing[-_]percent\b/;

/**
 * The V8 flag serving sets, or `undefined` when node was started with a growth setting of its own
 * (`node --heap-growing-percent=N`; NODE_OPTIONS cannot carry it).
 */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  if (execArgv.some((arg) => OWN_SETTING.test(arg))) return undefined;
  return `--heap-growing-percent=${SERVE_HEAP_GROWING_PERCENT}`;
}

/** Bounds this process's heap growth for serving (V8 reads the flag at each full collection). */
export function boundHeapGrowth(): void {
  const flag = heapGrowthFlag(process.execArgv);
  if (flag !== undefined) setFlagsFromString(flag);
}

/** Longest wait for the collection `giveBackMemory` asks for (at 100,000 skills it took 0.2 s). */
export const GIVE_BACK_WAIT_MS = 10_000;

/**
 * One full collection that gives memory back to the system, as V8's memory reducer runs once a process has been
 * idle for about ten seconds: serving asks for it once its start is done (mcp/warm.ts), so a large start is at its
 * serving size when it says ready, not ten seconds later. It goes through an in-process inspector session
 * (`HeapProfiler.collectGarbage`): Node 20 has no other way without `--expose-gc`, and a session in the process
 * opens no port and is closed at once. Resolves when done (or after GIVE_BACK_WAIT_MS); at once, having done
 * nothing, where node was built without the inspector or the session is refused.
 */
export async function giveBackMemory(): Promise<void> {
  let session: import('node:inspector').Session;
  try {
    session = new (await import('node:inspector')).Session();
    session.connect();
  } catch {
    return;
  }
  await new Promise<void>((resolve) => {
    // Readiness waits for it: never longer than GIVE_BACK_WAIT_MS.
    setTimeout(resolve, GIVE_BACK_WAIT_MS).unref();
    try {
      session.post('HeapProfiler.collectGarbage', () => resolve());
    } catch {
      resolve();
    }
  });
  // Not inside the inspector's callback, which is still answering the session.
  setImmediate(() => session.disconnect());
}
