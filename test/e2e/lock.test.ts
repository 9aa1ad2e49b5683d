import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, PROJECT_ROOT } from '../helpers/fixtures.ts';
import { CLI_ARGS, startHttp, writeConfig } from '../helpers/server.ts';

const catalog = fixture('catalog');

/** Runs the CLI to its end; `onStderr` sees its stderr as it grows. */
function cli(
  args: string[],
  onStderr?: (text: string) => void,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    onStderr?.(stderr);
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('two processes on one dataDir', () => {
  it('the second serve or sync fails at once naming the holder; a sync that waits takes over once it is gone', async () => {
    const config = writeConfig({
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: catalog.commits['c2']!, paths: ['skills'] }],
    });
    const dataDir = path.join(path.dirname(config), 'data');
    const holder = await startHttp(config);
    const pid = holder.child.pid!;
    const busy = new RegExp(
      `^skillpin(?: sync)?: dataDir ${dataDir} is in use by skillpin serve \\(pid ${pid}, since [^)]+\\); ` +
        `stop it, or remove ${path.join(dataDir, 'lock')} if that process is gone\\n$`,
    );
    const [sync, serve] = await Promise.all([
      cli(['sync', '--config', config]),
      cli(['serve', '--config', config]),
    ]);
    expect([sync.code, serve.code]).toEqual([2, 2]);
    expect(sync.stderr).toMatch(busy);
    expect(serve.stderr).toMatch(busy);

    const waitLine = `skillpin sync: dataDir is in use by skillpin serve (pid ${pid}); waiting up to 300s\n`;
    let killed: Promise<void> | undefined;
    const waited = await cli(['sync', '--config', config, '--wait', '5m'], (stderr) => {
      if (killed !== undefined || !stderr.includes(waitLine)) return;
      // Once the sync waits, the holder dies without a chance to clean up: its lock names a pid that is gone.
      holder.child.kill('SIGKILL');
      killed = holder.stop();
    });
    await killed;
    expect([waited.code, waited.stderr]).toEqual([
      0,
      `${waitLine}catalog: unchanged at ${catalog.commits['c2']}\n`,
    ]);
    expect(existsSync(path.join(dataDir, 'lock'))).toBe(false);
  });
});
