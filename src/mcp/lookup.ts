import type { Catalog, Namespace } from '../catalog/index.ts';
import type { IndexedSkill } from '../index/index.ts';
import { skillMdUri } from './entries.ts';

export type Found = { ns: Namespace; skill: IndexedSkill; uri: string };
export type Lookup = { ok: true; found: Found } | { ok: false; message: string };

/** Every listed skill: each source's current commit. */
export function listedSkills(catalog: Catalog): Found[] {
  return catalog
    .listed()
    .flatMap((ns) => ns.index.skills.map((skill) => ({ ns, skill, uri: skillMdUri(ns, skill) })));
}

/** Listed skills named `name` (in `source` when given). */
export function byName(catalog: Catalog, name: string, source?: string): Found[] {
  return listedSkills(catalog).filter(
    (found) => found.skill.name === name && (source === undefined || found.ns.source === source),
  );
}

/**
 * A skill by the URI of its SKILL.md (any served commit) or by name among listed skills. A name that matches
 * several skills is an error listing every candidate: never a silent pick.
 */
export function findSkill(
  catalog: Catalog,
  reference: { uri?: string; name?: string; source?: string },
  byUri: (uri: string) => Found | undefined,
): Lookup {
  if (reference.uri !== undefined) {
    const found = byUri(reference.uri);
    return found === undefined
      ? { ok: false, message: `no skill is served at ${reference.uri}` }
      : { ok: true, found };
  }
  const name = reference.name ?? '';
  const matches = byName(catalog, name, reference.source);
  if (matches.length === 1) return { ok: true, found: matches[0]! };
  const where = reference.source === undefined ? '' : ` in source "${reference.source}"`;
  if (matches.length === 0)
    return {
      ok: false,
      message: `no listed skill is named "${name}"${where}; skill_list shows what is served`,
    };
  return {
    ok: false,
    message: `"${name}" names ${matches.length} skills${where}; pass one of these URIs instead:\n${matches.map((m) => `- ${m.uri}`).join('\n')}`,
  };
}
