/** Objects of a pack handled between two turns of the event loop: a pack of tiny objects stalls nothing else. */
export const OBJECTS_PER_TURN = 64;

/** Lets the event loop run (sockets, timers, other sources) before the next slice of work on a pack. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
