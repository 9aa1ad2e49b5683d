/** A script runs this long unless its declaration says otherwise: 60 s. */
export const DEFAULT_TIMEOUT_MS = 60_000;
/** No declaration makes a script run longer: 300 s. */
export const MAX_TIMEOUT_MS = 300_000;
/** Bytes kept of each of stdout and stderr; the rest is read and dropped, and the result says truncated. */
export const MAX_STREAM_BYTES = 1024 * 1024;
/** After SIGTERM at the timeout, the process group gets this long before SIGKILL. */
export const KILL_GRACE_MS = 1000;
/** After the script exits, its pipes get this long to close (a detached grandchild may hold them open). */
export const DRAIN_MS = 500;
/** Arguments of one run, and their bytes together: a preview a person can read. */
export const MAX_ARGS = 256;
export const MAX_ARGS_BYTES = 64 * 1024;
