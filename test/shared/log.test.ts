import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stderrDestination } from '../../src/shared/logger.ts';
import { tempDir } from '../helpers/temp.ts';

describe('the stderr destination of the logger', () => {
  it('writes each line whole and in order; once a write fails (nobody reads), it drops every later line', () => {
    const file = path.join(tempDir('skillpin-log-'), 'stderr.log');
    const fd = openSync(file, 'w');
    const destination = stderrDestination(fd);
    destination.write('{"msg":"one"}\n');
    destination.write('{"msg":"two"}\n');
    closeSync(fd);
    // EBADF, as EPIPE once a host has gone: no throw, no retry.
    expect(() => destination.write('{"msg":"three"}\n')).not.toThrow();
    // The descriptor's number is taken again by another file: a destination given up writes nothing there.
    const reused = openSync(file, 'a');
    destination.write('{"msg":"four"}\n');
    closeSync(reused);
    expect([reused, readFileSync(file, 'utf8')]).toEqual([fd, '{"msg":"one"}\n{"msg":"two"}\n']);
  });
});
