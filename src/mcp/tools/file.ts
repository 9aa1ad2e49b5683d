import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { SCHEME } from '../../catalog/index.ts';
import { decodeUtf8 } from '../../skills/index.ts';
import { utf8Prefix } from '../../shared/text.ts';
import { allowances, MAX_CALL_BYTES, MAX_ENTRY_BYTES, MAX_FILE_PATHS } from '../budget.ts';
import type { ServedFile } from '../snapshot.ts';
import { failure, toolOrigin, originSchema, READ_ONLY, type ToolDeps } from './common.ts';
import { findSkill } from './find.ts';
import { originLine, renderFile } from './render.ts';

const entrySchema = z.object({
  path: z.string(),
  uri: z.string().optional(),
  size: z.number().optional(),
  mimeType: z.string().optional(),
  text: z.string().optional(),
  base64: z.string().optional(),
  truncated: z.boolean().optional(),
  error: z.string().optional(),
});
type Entry = z.infer<typeof entrySchema>;

const inputSchema = z.object({
  skill: z.string().describe('the skill: the skill:// URI of its SKILL.md, or its name'),
  source: z.string().optional().describe('with a name: the source id to look in'),
  paths: z
    .array(z.string())
    .min(1)
    .max(MAX_FILE_PATHS)
    .describe('file paths relative to the skill folder, e.g. references/FORMS.md'),
});

const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;

const config = {
  title: 'Read skill files',
  description:
    `Read up to ${MAX_FILE_PATHS} files of one skill, by paths relative to its folder (as listed by ` +
    'skill_load). Text comes back as text, other files as base64 with a media type. At most ' +
    `${mebibytes(MAX_ENTRY_BYTES)} per file and ${mebibytes(MAX_CALL_BYTES)} per call; a cut file says ` +
    'truncated with its real size.',
  inputSchema,
  outputSchema: z.object({ origin: originSchema, files: z.array(entrySchema) }),
  annotations: READ_ONLY,
};

/** Why a requested path cannot name a file of the skill, or `undefined` when it can. */
function badPath(path: string): string | undefined {
  if (path === '' || path.startsWith('/')) return 'must be a path relative to the skill folder';
  if (path.includes('\\')) return 'must use "/" and contain no backslash';
  if (path.split('/').some((segment) => segment === '..' || segment === '.' || segment === ''))
    return 'must not contain ".", ".." or empty segments';
  return undefined;
}

/** skill_file: files of one skill in request order, each its own text, base64 or error, within the budget. */
export function registerSkillFile(mcp: McpServer, { serving, read }: ToolDeps): void {
  mcp.registerTool('skill_file', config, async ({ skill: reference, source: sourceId, paths }) => {
    const found = findSkill(
      serving(),
      reference.startsWith(SCHEME) ? { uri: reference } : { name: reference, source: sourceId },
    );
    if (!found.ok) return failure(found.message);
    const { served } = found;
    const planned = paths.map((path): { path: string; file?: ServedFile; error?: string } => {
      const bad = badPath(path);
      if (bad !== undefined) return { path, error: `${JSON.stringify(path)} ${bad}` };
      const file = served.files.get(path);
      return file === undefined
        ? {
            path,
            error: `${JSON.stringify(path)} is not a file of this skill (see skill_load for its manifest)`,
          }
        : { path, file };
    });
    // The budget is decided from the manifest's sizes before any byte is read.
    const readable = planned.flatMap((entry) => (entry.file === undefined ? [] : [entry.file]));
    const budget = allowances(readable.map((file) => file.file.size));
    const files: Entry[] = [];
    let next = 0;
    for (const entry of planned) {
      if (entry.file === undefined) {
        files.push({ path: entry.path, error: entry.error! });
        continue;
      }
      const limit = budget[next++]!;
      const bytes = await read(served.ns, entry.file);
      const cut = limit < bytes.byteLength;
      const base = {
        path: entry.path,
        uri: entry.file.uri,
        size: bytes.byteLength,
        mimeType: entry.file.mimeType,
        // An entry of structuredContent (outputSchema, JSON): `truncated` only on a file cut short.
        ...(cut ? { truncated: true } : {}),
      };
      if (decodeUtf8(bytes) !== undefined)
        files.push({ ...base, text: new TextDecoder().decode(utf8Prefix(bytes, limit)) });
      else files.push({ ...base, base64: Buffer.from(bytes.subarray(0, limit)).toString('base64') });
    }
    return {
      content: [
        { type: 'text', text: originLine(served) },
        ...files.map((entry) => ({ type: 'text' as const, text: renderFile(entry) })),
      ],
      structuredContent: { origin: toolOrigin(served), files },
    };
  });
}
