import type { GitSettings } from '../../src/config/index.ts';
import type { TreeEntry } from '../../src/shared/tree.ts';

/** Both git backends, for tests that run once against each. */
export const BACKENDS: Array<{ name: 'cli' | 'isomorphic'; settings: GitSettings }> = [
  { name: 'cli', settings: { backend: 'cli' } },
  { name: 'isomorphic', settings: { backend: 'isomorphic' } },
];

/**
 * Tree entries without the blob sizes that only the cli backend's listing carries (`git ls-tree -l`; checked
 * against the objects' headers in test/git/listTree.test.ts): what both backends must agree on.
 */
export const withoutSizes = (entries: readonly TreeEntry[]): TreeEntry[] =>
  entries.map(({ size: _, ...entry }) => entry);

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
