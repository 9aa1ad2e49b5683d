import type { GitSettings } from '../../src/config/index.ts';

/** Both git backends, for tests that run once against each. */
export const BACKENDS: Array<{ name: 'cli' | 'isomorphic'; settings: GitSettings }> = [
  { name: 'cli', settings: { backend: 'cli' } },
  { name: 'isomorphic', settings: { backend: 'isomorphic' } },
];

/** Sets environment variables for the duration of `run`, then restores them exactly. */
export async function withEnv<T>(
  vars: Record<string, string | undefined>,
  run: () => Promise<T>,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  };
  apply(vars);
  try {
    return await run();
  } finally {
    apply(saved);
  }
}
