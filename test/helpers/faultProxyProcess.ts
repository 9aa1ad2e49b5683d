import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import type { Fault } from './faultProxy.ts';

/**
 * A fault proxy with one fault (no Buffer in it) in a child process, for a test that bounds this process's own
 * memory: the proxy's allocations, pumping a pack as fast as git takes it, would count there too.
 */
export async function startFaultProxyProcess(
  target: string,
  fault: Fault,
): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(import.meta.dirname, 'faultProxyMain.ts'), target, JSON.stringify(fault)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.trim());
    });
    void exited.then(([code]) => reject(new Error(`the fault proxy exited ${code} before it listened`)));
  });
  return {
    url,
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
