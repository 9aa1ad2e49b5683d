import { writeSync } from 'node:fs';
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

/** How long one log line may wait for a full stderr pipe to take it, in all, before it is dropped. */
export const STDERR_WAIT_MS = 1000;

/**
 * stderr, written synchronously (each line whole, in order, as `pino.destination(2)` writes it), given up once
 * nobody reads it. sonic-boom, behind `pino.destination`, retries a failed write for ever when the process exits:
 * a server whose host had gone (EPIPE) then never exited. Here a full pipe (EAGAIN) is waited for up to
 * STDERR_WAIT_MS a line; any other failure (EPIPE, EBADF) drops this line and every later one.
 */
export function stderrDestination(fd = 2): { write(line: string): void } {
  let gone = false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    write(line) {
      if (gone) return;
      let bytes = Buffer.from(line);
      let waited = 0;
      while (bytes.length > 0) {
        try {
          bytes = bytes.subarray(writeSync(fd, bytes));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') {
            gone = true;
            return;
          }
          if (waited >= STDERR_WAIT_MS) return;
          Atomics.wait(pause, 0, 0, 10);
          waited += 10;
        }
      }
    },
  };
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
    options.destination ?? stderrDestination(),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pinoLibrary()({ level: 'silent' });
}
