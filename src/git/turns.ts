/** Objects of a pack handled between two turns of the event loop: a pack of tiny objects stalls nothing else. */
export const OBJECTS_PER_TURN = 64;
/** Bytes inflated between two turns of the event loop: a large object's stream goes in slices of some 10 ms. */
export const INFLATED_PER_TURN = 4 * 1024 * 1024;
/** Compressed bytes an inflater is given at once: zlib inflates at most some 1,030 times its input, 4 MiB here. */
export const INFLATE_INPUT_BYTES = 4096;

/** Lets the event loop run (sockets, timers, other sources) before the next slice of work on a pack. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
