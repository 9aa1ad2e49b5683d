import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A logger at debug level whose JSON lines the test reads, and the raw text of all of them. */
export function capturingLogger(): { logger: Logger; lines: LogLine[]; text: () => string } {
  const lines: LogLine[] = [];
  let raw = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw += String(chunk);
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines, text: () => raw };
}
