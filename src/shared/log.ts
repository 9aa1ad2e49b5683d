// What a command's options say of logging. The logger itself (pino) is in logger.ts, which a command loads when it
// logs: `--version`, `--help` and a usage error never do.
import type { Logger } from 'pino';

export type { Logger };

/** pino's levels, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `pretty`: one coloured line per entry for people; `json`: one JSON object per line for machines. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  level?: LogLevel;
  /** Default: pretty when stderr is a terminal, else json. */
  format?: LogFormat;
  /** Where json lines go instead of stderr (tests read what a server logs). */
  destination?: { write(line: string): void };
}
