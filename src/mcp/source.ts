import type { Resource, ServerContext } from '@modelcontextprotocol/server';
import type { Skill, SkillReadResult, SkillSource } from '@modelcontextprotocol/server/ext/skills';
import type { FileReader } from '../catalog/index.ts';
import { decodeUtf8 } from '../skills/index.ts';
import { invalidParams } from './errors.ts';
import { locate } from './locate.ts';
import { cutPage, startOf } from './paging.ts';
import type { ListedPage, ServingState } from './serving.ts';

export type { ListedPage } from './serving.ts';

export interface CatalogSourceOptions {
  read: FileReader;
}

/** A SkillSource that needs no request context and always answers (or throws -32602 naming the URI). */
export interface CatalogSkillSource extends SkillSource {
  // `_meta` goes past SkillSource's page: the SDK's skills/list handler copies only `skills` and `nextCursor`,
  // so answerFromSnapshots (handlers.ts), which replaces that handler, is what puts it on the result.
  list(params: { cursor?: string }, ctx?: ServerContext): Promise<ListedPage>;
  get(uri: string, ctx?: ServerContext): Promise<Skill>;
  read(uri: string, ctx?: ServerContext): Promise<SkillReadResult>;
  readDirectory(
    uri: string,
    params: { cursor?: string },
    ctx?: ServerContext,
  ): Promise<{ resources: Resource[]; nextCursor?: string }>;
}

const uriOf = (resource: Resource) => resource.uri;

/**
 * The one SkillSource behind every namespace, answering from what `serving` gives at each request: listing shows
 * each source's current commit; entries, files and folders of retained commits are served too.
 */
export function catalogSkillSource(
  serving: () => ServingState,
  options: CatalogSourceOptions,
): CatalogSkillSource {
  return {
    async list({ cursor }: { cursor?: string }) {
      return serving().listing(cursor);
    },
    async get(uri: string) {
      const found = locate(serving(), uri);
      const served = found.snapshot.skills.get(found.uri);
      if (served === undefined) throw invalidParams(`No skill is served at ${uri}`, uri);
      return served.entry;
    },
    async read(uri: string): Promise<SkillReadResult> {
      const { snapshot, uri: canonical, path } = locate(serving(), uri);
      const file = snapshot.fileAt(path);
      if (file === undefined)
        throw invalidParams(
          snapshot.dirs.has(canonical)
            ? `${uri} is a directory; read it with resources/directory/read`
            : `${uri}: no such file in ${snapshot.uri}`,
          uri,
        );
      const bytes = await options.read(snapshot.ns, file);
      // Spec §Reading: text whenever the bytes decode losslessly as UTF-8, otherwise a blob.
      const text = decodeUtf8(bytes);
      return text === undefined ? { bytes, mimeType: file.mimeType } : { text, mimeType: file.mimeType };
    },
    async readDirectory(uri: string, { cursor }: { cursor?: string }) {
      const state = serving();
      const { snapshot, uri: canonical, path } = locate(state, uri);
      const children = snapshot.dirs.get(canonical);
      if (children === undefined)
        throw invalidParams(
          snapshot.fileAt(path) !== undefined
            ? `${uri} is not a directory resource`
            : `${uri}: no such directory in ${snapshot.uri}`,
          uri,
        );
      const start = startOf(children, uriOf, cursor);
      const result = cutPage(children, { start, size: state.pageSize, keyOf: uriOf });
      return result.nextCursor === undefined
        ? { resources: result.items }
        : { resources: result.items, nextCursor: result.nextCursor };
    },
    async listResources() {
      return [...serving().resources];
    },
  };
}
