import { describe, expect, it } from 'vitest';
import { buildNamespace, skillFileUri } from '../../src/catalog/index.ts';
import type { GitSettings } from '../../src/config/index.ts';
import { blobAccess, openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { indexCommit } from '../../src/index/index.ts';
import { BACKENDS, withoutSizes } from '../helpers/backends.ts';
import { fixtures } from '../helpers/fixtures.ts';

/** Everything a host could see of one commit: the index (digests, sizes, problems) and every URI served. */
async function served(gitdir: string, commit: string, settings: GitSettings) {
  const repo = await openLocalRepository(gitdir, settings);
  try {
    const tree = await walkCommit(repo, commit);
    // As sync indexes: the cli backend streams the blobs (blobsReader), the isomorphic one reads them one by one.
    const index = await indexCommit({ ...tree, ...blobAccess(repo) });
    const namespace = buildNamespace('fx', index, { repository: 'local:fx' }, (blob) => readBlob(repo, blob));
    return {
      entries: withoutSizes(tree.entries),
      index,
      uris: namespace.skills
        .flatMap((skill) =>
          skill.files.map((file) => skillFileUri('fx', commit, skill.servedDir, file.relPath)),
        )
        .sort(),
    };
  } finally {
    await repo.close();
  }
}

describe('both backends serve the same bytes', () => {
  const all = Object.values(fixtures()).flatMap((fx) =>
    Object.entries(fx.commits).map(([id, commit]) => ({
      name: `${fx.name} ${id}`,
      gitdir: fx.gitdir,
      commit,
    })),
  );

  it.each(all)('$name: identical tree, index (digests, problems) and URIs', async ({ gitdir, commit }) => {
    const [cli, isomorphic] = await Promise.all(
      BACKENDS.map(({ settings }) => served(gitdir, commit, settings)),
    );
    expect(cli!.index.skills.length + cli!.index.problems.length).toBeGreaterThan(0);
    expect(isomorphic).toEqual(cli);
  });
});
