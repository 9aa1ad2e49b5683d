import type { Skill } from '@modelcontextprotocol/server/ext/skills';
import { namespaceUri, type Namespace } from '../catalog/index.ts';
import { type IndexedSkill, signerMeta, skillDigest } from '../index/index.ts';
import { join } from '../skills/index.ts';
import { compareText } from '../shared/text.ts';

/** Our own `_meta` prefix for provenance (the `io.modelcontextprotocol.skills/` prefix is reserved). */
export const META_PREFIX = 'dev.skillpin/';

export function provenance(ns: Namespace, skill: IndexedSkill): Record<string, string> {
  return {
    [`${META_PREFIX}repository`]: ns.origin.repository,
    [`${META_PREFIX}commit`]: ns.commit,
    [`${META_PREFIX}path`]: skill.dir === '' ? '.' : skill.dir,
    [`${META_PREFIX}commitTime`]: ns.index.commitTime,
    [`${META_PREFIX}digest`]: skillDigest(skill),
    ...signerMeta(META_PREFIX, ns.index.signer),
  };
}

export function skillMdUri(ns: Namespace, skill: IndexedSkill): string {
  return namespaceUri(ns.source, ns.commit, join(skill.servedDir, 'SKILL.md'));
}

const entryCache = new WeakMap<Namespace, Map<string, Skill>>();

/** The protocol entry of a served skill: verbatim frontmatter, complete manifest sorted by URI, provenance. Built once per namespace. */
export function skillEntry(ns: Namespace, skill: IndexedSkill): Skill {
  let cache = entryCache.get(ns);
  if (cache === undefined) entryCache.set(ns, (cache = new Map()));
  const known = cache.get(skill.servedDir);
  if (known !== undefined) return known;
  const resources = skill.files
    .map((file) => ({
      uri: namespaceUri(ns.source, ns.commit, join(skill.servedDir, file.relPath)),
      digest: file.digest,
      size: file.size,
    }))
    .sort((a, b) => compareText(a.uri, b.uri));
  const entry = {
    uri: skillMdUri(ns, skill),
    frontmatter: skill.frontmatter as Skill['frontmatter'],
    resources,
    _meta: provenance(ns, skill),
  };
  cache.set(skill.servedDir, entry);
  return entry;
}
