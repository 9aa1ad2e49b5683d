import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { namespaceUri, parseSkillUri, type Catalog } from '../catalog/index.ts';
import { basename, decodeUtf8, dirname, join } from '../skills/index.ts';
import { allowances, MAX_FILE_PATHS, utf8Prefix } from './budget.ts';
import { findSkill, type Found } from './lookup.ts';
import type { CatalogSkillSource } from './source.ts';

const origin = z.object({ source: z.string(), commit: z.string(), uri: z.string() });
const problem = z.object({
  source: z.string(),
  commit: z.string(),
  path: z.string(),
  reason: z.string(),
  severity: z.enum(['error', 'warning']),
  detail: z.string(),
});

const listOutput = z.object({
  skills: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      uri: z.string(),
      source: z.string(),
      commit: z.string(),
      files: z.number(),
      bytes: z.number(),
    }),
  ),
  problems: z.array(problem),
  failures: z.array(z.object({ source: z.string(), reason: z.string(), detail: z.string() })),
});
const loadOutput = z.object({
  origin,
  name: z.string(),
  skillMd: z.string(),
  files: z.array(z.object({ path: z.string(), uri: z.string(), size: z.number(), digest: z.string() })),
});
const fileEntry = z.object({
  path: z.string(),
  uri: z.string().optional(),
  size: z.number().optional(),
  mimeType: z.string().optional(),
  text: z.string().optional(),
  base64: z.string().optional(),
  truncated: z.boolean().optional(),
  error: z.string().optional(),
});
const fileOutput = z.object({ origin, files: z.array(fileEntry) });

const READ_ONLY = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
} as const;

function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

function originLine(found: Found): string {
  return `From skillpin source "${found.ns.source}" at commit ${found.ns.commit}: ${found.uri}`;
}

/** A skill by the URI of its SKILL.md, in any served commit. */
function atUri(catalog: Catalog, uri: string): Found | undefined {
  const parsed = parseSkillUri(uri);
  if (!parsed.ok || basename(parsed.path) !== 'SKILL.md') return undefined;
  const ns = catalog.namespace(parsed.source, parsed.commit);
  const skill = ns?.skills.get(dirname(parsed.path));
  return ns === undefined || skill === undefined
    ? undefined
    : { ns, skill, uri: namespaceUri(ns.source, ns.commit, join(skill.servedDir, 'SKILL.md')) };
}

/** Why a requested path cannot name a file of the skill, or `undefined` when it can. */
function badPath(path: string): string | undefined {
  if (path === '' || path.startsWith('/')) return 'must be a path relative to the skill folder';
  if (path.includes('\\')) return 'must use "/" and contain no backslash';
  if (path.split('/').some((segment) => segment === '..' || segment === '.' || segment === ''))
    return 'must not contain ".", ".." or empty segments';
  return undefined;
}

/**
 * skill_list, skill_load and skill_file: the same skills for hosts without the skills extension, the same
 * bytes as resources/read (every read goes through the source's verified read).
 */
export function registerTools(mcp: McpServer, catalog: Catalog, source: CatalogSkillSource): void {
  const lookup = (reference: { uri?: string; name?: string; source?: string }) =>
    findSkill(catalog, reference, (uri) => atUri(catalog, uri));

  mcp.registerTool(
    'skill_list',
    {
      title: 'List skills',
      description:
        'List the skills this server serves (name, description, URI, origin), and the problems of the served commits. Filter by source or by words in the name or description.',
      inputSchema: z.object({
        source: z.string().optional().describe('only skills of this source id'),
        query: z
          .string()
          .optional()
          .describe(
            'only skills whose name or description contains every word of this text (case-insensitive)',
          ),
      }),
      outputSchema: listOutput,
      annotations: READ_ONLY,
    },
    async ({ source: only, query }) => {
      const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
      const namespaces = catalog.listed().filter((ns) => only === undefined || ns.source === only);
      const skills = namespaces.flatMap((ns) =>
        ns.index.skills
          .filter((skill) => {
            const haystack = `${skill.name} ${String(skill.frontmatter['description'])}`.toLowerCase();
            return words.every((word) => haystack.includes(word));
          })
          .map((skill) => ({
            name: skill.name,
            description: String(skill.frontmatter['description']),
            uri: namespaceUri(ns.source, ns.commit, join(skill.servedDir, 'SKILL.md')),
            source: ns.source,
            commit: ns.commit,
            files: skill.files.length,
            bytes: skill.bytes,
          })),
      );
      const problems = namespaces.flatMap((ns) =>
        ns.index.problems.map((p) => ({ source: ns.source, commit: ns.commit, ...p })),
      );
      const failures = catalog.state.failures
        .filter((f) => only === undefined || f.id === only)
        .map((f) => ({ source: f.id, reason: f.reason, detail: f.detail }));
      // The text is what most hosts put in front of the model: one header per source@commit carrying the URI
      // prefix, then a short line per skill; problems are listed without their details (structuredContent has them).
      const lines: string[] = [];
      for (const ns of namespaces) {
        const mine = skills.filter((skill) => skill.source === ns.source);
        if (mine.length === 0) continue;
        lines.push(
          `${ns.source} @ ${ns.commit} (URIs: ${namespaceUri(ns.source, ns.commit)}/<path>/SKILL.md):`,
        );
        for (const skill of mine)
          lines.push(
            `- ${skill.name} [${skill.uri.slice(namespaceUri(ns.source, ns.commit).length + 1, -'/SKILL.md'.length)}]: ${skill.description}`,
          );
      }
      if (skills.length === 0)
        lines.push(
          words.length > 0 || only !== undefined ? 'No listed skill matches.' : 'No skill is listed.',
        );
      const errors = problems.filter((p) => p.severity === 'error');
      if (errors.length > 0)
        lines.push(
          '',
          `Not served (${errors.length}):`,
          ...errors.map((p) => `- ${p.source}: ${p.path}: ${p.reason}`),
        );
      if (problems.length > errors.length) {
        const counts = new Map<string, number>();
        for (const p of problems)
          if (p.severity === 'warning') counts.set(p.reason, (counts.get(p.reason) ?? 0) + 1);
        lines.push('', `Warnings: ${[...counts].map(([reason, n]) => `${reason} ×${n}`).join(', ')}`);
      }
      if (failures.length > 0)
        lines.push(
          '',
          'Sources that could not be synced:',
          ...failures.map((f) => `- ${f.source}: ${f.reason}: ${f.detail}`),
        );
      return {
        content: [{ type: 'text', text: lines.join('\n') }],
        structuredContent: { skills, problems, failures },
      };
    },
  );

  mcp.registerTool(
    'skill_load',
    {
      title: 'Load a skill',
      description:
        "Load a skill's SKILL.md verbatim and its manifest (path, size and sha256 digest of every file). Referenced files are not included: read them with skill_file.",
      inputSchema: z.object({
        uri: z.string().optional().describe('the skill:// URI of the SKILL.md'),
        name: z.string().optional().describe('the skill name, when no uri is given'),
        source: z.string().optional().describe('with name: the source id to look in'),
      }),
      outputSchema: loadOutput,
      annotations: READ_ONLY,
    },
    async ({ uri, name, source: in_ }) => {
      if ((uri === undefined) === (name === undefined)) return failure('give exactly one of uri or name');
      const found = lookup({
        ...(uri === undefined ? {} : { uri }),
        ...(name === undefined ? {} : { name }),
        ...(in_ === undefined ? {} : { source: in_ }),
      });
      if (!found.ok) return failure(found.message);
      const { ns, skill } = found.found;
      const text = (await source.readVerified(found.found.uri)) as { text?: string };
      const files = skill.files.map((file) => ({
        path: file.relPath,
        uri: namespaceUri(ns.source, ns.commit, join(skill.servedDir, file.relPath)),
        size: file.size,
        digest: file.digest,
      }));
      const manifest = files.map((f) => `- ${f.path} (${f.size} bytes, ${f.digest})`).join('\n');
      return {
        content: [
          {
            type: 'text',
            text: `${originLine(found.found)}\nFiles (read them with skill_file):\n${manifest}`,
          },
          { type: 'text', text: text.text ?? '' },
        ],
        structuredContent: {
          origin: { source: ns.source, commit: ns.commit, uri: found.found.uri },
          name: skill.name,
          skillMd: text.text ?? '',
          files,
        },
      };
    },
  );

  mcp.registerTool(
    'skill_file',
    {
      title: 'Read skill files',
      description: `Read up to ${MAX_FILE_PATHS} files of one skill, by paths relative to its folder (as listed by skill_load). Text comes back as text, other files as base64 with a media type. At most 1 MiB per file and 4 MiB per call; a cut file says truncated with its real size.`,
      inputSchema: z.object({
        skill: z.string().describe('the skill: the skill:// URI of its SKILL.md, or its name'),
        source: z.string().optional().describe('with a name: the source id to look in'),
        paths: z
          .array(z.string())
          .min(1)
          .max(MAX_FILE_PATHS)
          .describe('file paths relative to the skill folder, e.g. references/FORMS.md'),
      }),
      outputSchema: fileOutput,
      annotations: READ_ONLY,
    },
    async ({ skill: reference, source: in_, paths }) => {
      const found = lookup(
        reference.startsWith('skill://')
          ? { uri: reference }
          : { name: reference, ...(in_ === undefined ? {} : { source: in_ }) },
      );
      if (!found.ok) return failure(found.message);
      const { ns, skill } = found.found;
      const byPath = new Map(skill.files.map((file) => [file.relPath, file]));
      const planned = paths.map((path) => {
        const bad = badPath(path);
        if (bad !== undefined) return { path, error: `${JSON.stringify(path)} ${bad}` };
        const file = byPath.get(path);
        return file === undefined
          ? {
              path,
              error: `${JSON.stringify(path)} is not a file of this skill (see skill_load for its manifest)`,
            }
          : { path, file };
      });
      // The budget is decided from the manifest's sizes before any byte is read.
      const readable = planned.filter((entry) => entry.file !== undefined);
      const budget = allowances(readable.map((entry) => entry.file!.size));
      const allowanceOf = new Map(readable.map((entry, index) => [entry, budget[index]!]));
      const files: Array<z.infer<typeof fileEntry>> = [];
      for (const entry of planned) {
        if (entry.file === undefined) {
          files.push({ path: entry.path, error: entry.error! });
          continue;
        }
        const uri = namespaceUri(ns.source, ns.commit, join(skill.servedDir, entry.path));
        const { bytes, mimeType } = await source.readBytes(uri);
        const limit = allowanceOf.get(entry)!;
        const text = decodeUtf8(bytes);
        const cut = limit < bytes.byteLength;
        const base = {
          path: entry.path,
          uri,
          size: bytes.byteLength,
          mimeType,
          ...(cut ? { truncated: true } : {}),
        };
        if (text !== undefined)
          files.push({ ...base, text: new TextDecoder().decode(utf8Prefix(bytes, limit)) });
        else files.push({ ...base, base64: Buffer.from(bytes.subarray(0, limit)).toString('base64') });
      }
      const content = [
        { type: 'text' as const, text: originLine(found.found) },
        ...files.map((f) => ({
          type: 'text' as const,
          text:
            f.error !== undefined
              ? `${f.path}: error: ${f.error}`
              : `${f.path} (${f.size} bytes, ${f.mimeType}${f.truncated ? ', truncated' : ''})${f.text !== undefined ? `\n${f.text}` : `\nbase64: ${f.base64}`}`,
        })),
      ];
      return {
        content,
        structuredContent: { origin: { source: ns.source, commit: ns.commit, uri: found.found.uri }, files },
      };
    },
  );
}
