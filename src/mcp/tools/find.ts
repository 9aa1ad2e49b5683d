import { parseSkillUri } from '../../catalog/index.ts';
import type { ServedSkill } from '../snapshot.ts';
import type { ServingState } from '../serving.ts';

export interface SkillReference {
  uri?: string;
  name?: string;
  /** With `name`: the source id to look in. */
  source?: string;
}

export type Lookup = { ok: true; served: ServedSkill } | { ok: false; message: string };

/**
 * A skill by the URI of its SKILL.md (any served commit) or by name among listed skills (with `source`, among that
 * source's current commit, listed or not). A name that matches several skills is an error listing every
 * candidate: never a silent pick.
 */
export function findSkill(serving: ServingState, reference: SkillReference): Lookup {
  if (reference.uri !== undefined) {
    const parsed = parseSkillUri(reference.uri);
    const served = parsed.ok
      ? serving.snapshotAt(parsed.source, parsed.commit)?.skills.get(parsed.uri)
      : undefined;
    return served === undefined
      ? { ok: false, message: `no skill is served at ${reference.uri}` }
      : { ok: true, served };
  }
  const name = reference.name ?? '';
  const current = serving.state.sources.find((served) => served.id === reference.source)?.current;
  const matches =
    reference.source === undefined
      ? (serving.named.get(name) ?? [])
      : current === undefined
        ? []
        : [...(serving.snapshotAt(current.source, current.commit)?.skills.values() ?? [])].filter(
            (served) => served.skill.name === name,
          );
  if (matches.length === 1) return { ok: true, served: matches[0]! };
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
