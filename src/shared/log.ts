import { pino, type Logger } from 'pino';
import { redact } from './redact.ts';

export type { Logger };

/** Logs go to stderr: stdout belongs to the MCP stdio transport. Every line is cleaned of credentials. */
export function createLogger(level: string = process.env['SKILLPIN_LOG_LEVEL'] ?? 'info'): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: (line) => redact(line) },
    },
    pino.destination(2),
  );
}

/** A logger that drops everything: for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
