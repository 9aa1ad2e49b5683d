import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { type FrontmatterResult, frontmatterViolations } from '../skills/index.ts';

type Parsed = Extract<FrontmatterResult, { ok: true }>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The first field where two frontmatter values differ, as the SDK client compares them (no coercion); or none. */
function firstDifference(ours: unknown, theirs: unknown, at: string): string | undefined {
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    if (ours.length !== theirs.length) return at;
    for (const [index, item] of ours.entries()) {
      const found = firstDifference(item, theirs[index], `${at}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (isObject(ours) && isObject(theirs)) {
    for (const key of [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].sort()) {
      const found = firstDifference(ours[key], theirs[key], at === '' ? key : `${at}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return ours === theirs ? undefined : at;
}

const valueAt = (value: unknown, path: string): unknown =>
  path
    .split(/\.|(?=\[)/)
    .filter(Boolean)
    .reduce<unknown>((item, segment) => {
      const key = segment.startsWith('[') ? Number(segment.slice(1, -1)) : segment;
      return typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[key] : undefined;
    }, value);

/**
 * A SKILL.md whose frontmatter passes our rules, checked by the MCP SDK's own entry builder: hosts verify every
 * SKILL.md with the SDK's frontmatter reader (a YAML subset) and compare what it reads with the entry, so a
 * frontmatter it refuses, or reads differently from YAML 1.2, would fail every host's verification. Such a skill
 * is reported (`frontmatter-unsupported`) instead of served. Plain `key: value` frontmatter (`parsed.plain`) reads
 * alike in both and is not asked.
 */
export async function checkedBySdk(skillMd: Uint8Array, parsed: Parsed): Promise<FrontmatterResult> {
  // Our rules report their own problems (and the SDK the same ones in its words): only a passing skill is asked.
  if (frontmatterViolations(parsed.frontmatter).length > 0) return parsed;
  const name = parsed.frontmatter['name'] as string;
  let read: Record<string, unknown>;
  try {
    read = (await skillEntry(name, { 'SKILL.md': skillMd })).frontmatter;
  } catch (error) {
    if (!(error instanceof SkillCatalogError)) throw error;
    const message = error.problems.map((p) => p.message.replace(/^SKILL\.md frontmatter: /, '')).join('; ');
    const line = /^line (\d+): /.exec(message);
    return {
      ok: false,
      reason: 'frontmatter-unsupported',
      detail: `the MCP SDK's frontmatter reader, which hosts verify SKILL.md with, refuses it: ${message}`,
      line: line === null ? undefined : Number(line[1]),
    };
  }
  const field = firstDifference(parsed.frontmatter, read, '');
  if (field === undefined) return parsed;
  const top = field.split(/\.|\[/, 1)[0]!;
  return {
    ok: false,
    reason: 'frontmatter-unsupported',
    detail:
      `the MCP SDK's frontmatter reader, which hosts verify SKILL.md with, reads ${field || 'the frontmatter'} as ` +
      `${JSON.stringify(valueAt(read, field)) ?? 'nothing'}, where YAML reads ` +
      `${JSON.stringify(valueAt(parsed.frontmatter, field)) ?? 'nothing'}; quote the value`,
    line: parsed.lines[top],
  };
}
