import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import type { LogOptions } from './log.ts';
import { redact } from './redact.ts';

// pino-pretty (CommonJS, for a terminal) loads with the first pretty logger; pino itself is bundled with this module.
const load = createRequire(import.meta.url);
const prettyLibrary = () => (load('pino-pretty') as typeof import('pino-pretty')).build;

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
  return pino({ level: 'silent' }, { write: () => undefined });
}
