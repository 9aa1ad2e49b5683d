import { run } from '../../src/cli.ts';

/** `skillpin <args>` run in this process (no child process): its exit status and what it wrote. */
export async function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const written = { stdout: '', stderr: '' };
  const status = await run(args, {
    out: (text) => void (written.stdout += text),
    err: (text) => void (written.stderr += text),
    interactive: false,
  });
  return { status, ...written };
}
