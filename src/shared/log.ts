import { createRequire } from 'node:module';
import type { Logger, LoggerOptions } from 'pino';
import { redact } from './redact.ts';

// pino loads with the first logger and pino-pretty with the first pretty one: `--version` never logs. Both are
// CommonJS, so a require here loads them where a synchronous factory needs them.
const load = createRequire(import.meta.url);
const pinoLibrary = () => (load('pino') as typeof import('pino')).pino;
const prettyLibrary = () => (load('pino-pretty') as typeof import('pino-pretty')).build;

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

/** Logs go to stderr: stdout belongs to the MCP stdio transport. Every line is cleaned of credentials. */
export function createLogger(options: LogOptions = {}): Logger {
  const pino = pinoLibrary();
  const terminal = process.stderr.isTTY === true;
  const format = options.format ?? (terminal && options.destination === undefined ? 'pretty' : 'json');
  const settings: LoggerOptions = {
    level: options.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: (line) => redact(line) },
  };
  if (format === 'pretty')
    return pino(
      settings,
      prettyLibrary()({
        destination: 2,
        sync: true,
        colorize: terminal,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
      }),
    );
  // Level names, not pino's numbers: a reader (or a log query) sees "warn", not 40.
  return pino(
    { ...settings, formatters: { level: (label) => ({ level: label }) } },
    options.destination ?? pino.destination(2),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pinoLibrary()({ level: 'silent' });
}
