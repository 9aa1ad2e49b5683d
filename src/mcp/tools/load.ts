import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { decodeUtf8, SKILL_MD } from '../../skills/index.ts';
import { failure, toolOrigin, originSchema, READ_ONLY, type ToolDeps } from './common.ts';
import { findSkill } from './find.ts';
import { renderManifest } from './render.ts';

const inputSchema = z.object({
  uri: z.string().optional().describe('the skill:// URI of the SKILL.md'),
  name: z.string().optional().describe('the skill name, when no uri is given'),
  source: z.string().optional().describe('with name: the source id to look in'),
});

const outputSchema = z.object({
  origin: originSchema,
  name: z.string(),
  skillMd: z.string(),
  files: z.array(z.object({ path: z.string(), uri: z.string(), size: z.number(), digest: z.string() })),
});

const config = {
  title: 'Load a skill',
  description:
    "Load a skill's SKILL.md verbatim and its manifest (path, size and sha256 digest of every file). " +
    'Referenced files are not included: read them with skill_file.',
  inputSchema,
  outputSchema,
  annotations: READ_ONLY,
};

/** skill_load: SKILL.md verbatim and the manifest, by URI (any served commit) or by name (listed skills). */
export function registerSkillLoad(mcp: McpServer, { serving, read }: ToolDeps): void {
  mcp.registerTool('skill_load', config, async ({ uri, name, source: sourceId }) => {
    if ((uri === undefined) === (name === undefined)) return failure('give exactly one of uri or name');
    const found = findSkill(serving(), { uri, name, source: sourceId });
    if (!found.ok) return failure(found.message);
    const { served } = found;
    // A served SKILL.md passed the frontmatter parse, so it is UTF-8.
    const skillMd = decodeUtf8(await read(served.ns, served.files.get(SKILL_MD)!)) ?? '';
    const files = [...served.files.values()].map(({ uri: fileUri, file }) => ({
      path: file.relPath,
      uri: fileUri,
      size: file.size,
      digest: file.digest,
    }));
    return {
      content: [
        { type: 'text', text: renderManifest(served, files) },
        { type: 'text', text: skillMd },
      ],
      structuredContent: { origin: toolOrigin(served), name: served.skill.name, skillMd, files },
    };
  });
}
