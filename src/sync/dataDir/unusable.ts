import { osReason } from '../../shared/fs.ts';

/** dataDir cannot be created or written: names it, where it was set and the OS's reason, in one line. */
export class DataDirUnusableError extends Error {
  constructor(
    readonly dataDir: string,
    from: string | undefined,
    cause: unknown,
  ) {
    super(
      `cannot use dataDir ${dataDir} (${from === undefined ? 'as configured' : `from ${from}`}): ${osReason(cause)}`,
    );
    this.name = 'DataDirUnusableError';
  }
}
