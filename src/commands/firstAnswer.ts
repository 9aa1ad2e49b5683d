import { setImmediate as nextTurn } from 'node:timers/promises';
import { observeRequests } from '../mcp/observe.ts';
import type { ServerFactory } from '../mcp/server.ts';

/** How long a stdio start's later work waits for the host's first answer at most, from the connection's opening. */
export const FIRST_ANSWER_WAIT_MS = 2_000;

/** Requests a host sends before it asks for anything: their answers do not count. */
const OPENING = new Set(['initialize', 'ping']);

/** The moment a stdio host has its first answer, and the factory whose servers tell it. */
export interface FirstAnswer {
  /** Resolves a turn after an answer to a request other than `initialize` is sent, or `waitMs` after `observe`. */
  readonly answered: Promise<void>;
  /** `factory`, whose servers tell `answered`; the wait's bound starts now. */
  observe(factory: ServerFactory): ServerFactory;
  /** Resolves `answered` now. */
  release(): void;
}

/**
 * A stdio host starts a server per window and lists at once: what a start can do after that first answer (the
 * store checks and syncs of restored commits, `git --version`, search indexes) waits for it, so it does not
 * compete with the listing. A host that asks nothing does not hold it: `waitMs` bounds the wait.
 */
export function firstAnswer(waitMs: number = FIRST_ANSWER_WAIT_MS): FirstAnswer {
  let release!: () => void;
  const seen = new Promise<void>((resolve) => (release = resolve));
  return {
    // The answer is sent right after its observer is told: what waits starts a turn after that.
    answered: seen.then(() => nextTurn()),
    observe(factory) {
      const timer = setTimeout(release, waitMs);
      timer.unref();
      void seen.then(() => clearTimeout(timer));
      return observeRequests(factory, (method) => {
        if (!OPENING.has(method)) release();
      });
    },
    release: () => release(),
  };
}
