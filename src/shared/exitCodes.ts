/**
 * The exit status of every command, one meaning each: 0, 1 and 2 as `diff` and `grep` use them (ok; something
 * found or changed; trouble), then the codes of BSD's sysexits.h for what stops a command before its work. Listed
 * in docs/exit-codes.md, which a test holds to this table.
 */
export const EXIT_CODES = {
  ok: { status: 0, meaning: 'done, with nothing to act on' },
  findings: {
    status: 1,
    meaning:
      'done, and found something to act on: a problem or a refused signature, a file that does not verify, a lockfile that changed, two commits that differ',
  },
  failed: {
    status: 2,
    meaning: 'a source could not be resolved, fetched or read, so the work was not done for it',
  },
  usage: { status: 64, meaning: 'the command line cannot be acted on as given' },
  unavailable: { status: 69, meaning: 'what the command must reach is not there: a server, a port' },
  internal: {
    status: 70,
    meaning: 'an unexpected error stopped the command: a bug, its stack trace on stderr',
  },
  cannotCreate: {
    status: 73,
    meaning: 'a file or folder the command writes cannot be created or written: dataDir, the config of init',
  },
  busy: {
    status: 75,
    meaning: 'another skillpin process was syncing a source and did not finish in time: try again',
  },
  config: {
    status: 78,
    meaning:
      'the config cannot be used: missing or invalid, its lockfile or keys, or a source another process on its dataDir defines otherwise',
  },
} as const;

type ExitName = keyof typeof EXIT_CODES;

/** The statuses by name, for `return EXIT.usage`. */
export const EXIT = Object.fromEntries(
  Object.entries(EXIT_CODES).map(([name, { status }]) => [name, status]),
) as { readonly [N in ExitName]: (typeof EXIT_CODES)[N]['status'] };

export type ExitStatus = (typeof EXIT)[ExitName];
