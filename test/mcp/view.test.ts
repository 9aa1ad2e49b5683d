import { describe, expect, it } from 'vitest';
import { buildNamespace } from '../../src/catalog/index.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { buildView } from '../../src/mcp/view.ts';
import { compareText } from '../../src/shared/text.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

describe('a catalog view', () => {
  it('lists every source’s skills in the order of their URIs, whatever the order of the sources and folders', () => {
    // Source ids that start one another, and folders whose first characters sort on either side of `/` (`-`, `.`,
    // digits, capitals, a space encoded as %20), so two namespaces' skills would interleave if anything could.
    const folders = ['z', '-x', '.y', '0', 'A', 'a b', 'skills/a', 'skills-b', 'skills.c', 'é'];
    const sources = ['ab', 'a', 'a-b', 'a.b', 'a0', 'a-c'];
    const namespaces = sources.map((source, i) => {
      const index = {
        ...commitIndexOf(folders.map((dir) => oneFileSkill(`s${i}-${folders.indexOf(dir)}`, 'd', { dir }))),
        commit: String(i).repeat(40),
      };
      return buildNamespace(source, index, { repository: 'local:test' }, async () => new Uint8Array());
    });
    const view = buildView(namespaces, buildSnapshot);
    const uris = view.listed.map((served) => served.uri);
    expect(uris).toHaveLength(sources.length * folders.length);
    expect(uris).toEqual([...uris].sort(compareText));
    expect(uris.slice(0, 3)).toEqual([
      'skill://a-b/2222222222222222222222222222222222222222/%C3%A9/SKILL.md',
      'skill://a-b/2222222222222222222222222222222222222222/-x/SKILL.md',
      'skill://a-b/2222222222222222222222222222222222222222/.y/SKILL.md',
    ]);
    expect([...new Set(view.listed.map((served) => served.ns.source))]).toEqual([
      'a-b',
      'a-c',
      'a.b',
      'a',
      'a0',
      'ab',
    ]);
    // Every skill is named (each name is its own here).
    expect([...view.named.keys()]).toHaveLength(sources.length * folders.length);
  });
});
