import { ProtocolError, ProtocolErrorCode, type Resource } from '@modelcontextprotocol/server';
import {
  DIRECTORY_MIME_TYPE,
  type Skill,
  type SkillReadResult,
  type SkillSource,
} from '@modelcontextprotocol/server/ext/skills';
import { namespaceUri, parseSkillUri, type Catalog, type Namespace } from '../catalog/index.ts';
import { digestOf } from '../index/index.ts';
import { basename, decodeUtf8, dirname, join } from '../skills/index.ts';
import type { Logger } from '../shared/log.ts';
import { provenance, skillEntry, skillMdUri } from './entries.ts';
import { mimeTypeFor } from './mime.ts';
import { compareText } from '../shared/text.ts';

export const DEFAULT_PAGE_SIZE = 100;

/** -32602 with the requested URI in `data.uri` (SEP-2164), and a message that names it. */
const invalidParams = (message: string, uri?: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, message, uri === undefined ? undefined : { uri });

/** Resolves a request URI to its namespace and served path, or throws -32602 naming the URI and why. */
function locate(catalog: Catalog, uri: string): { ns: Namespace; path: string } {
  const parsed = parseSkillUri(uri);
  if (!parsed.ok) throw invalidParams(`${uri} is not a URI this server serves: ${parsed.problem}`, uri);
  const ns = catalog.namespace(parsed.source, parsed.commit);
  if (ns === undefined) {
    const known = catalog.state.sources.some((source) => source.id === parsed.source);
    throw invalidParams(
      known
        ? `${uri}: source "${parsed.source}" does not serve commit ${parsed.commit}`
        : `${uri}: no source "${parsed.source}" is configured`,
      uri,
    );
  }
  return { ns, path: parsed.path };
}

// Cursors name the last URI of the previous page, so paging survives a catalog swap (spec: stable cursors).
const encodeCursor = (uri: string) => Buffer.from(uri, 'utf8').toString('base64url');
function decodeCursor(cursor: string): string {
  const uri = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!uri.startsWith('skill://') || encodeCursor(uri) !== cursor)
    throw invalidParams(`invalid cursor ${JSON.stringify(cursor)}`);
  return uri;
}

/** One page of `items` (sorted by `keyOf`) after the cursor. */
function page<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
  cursor: string | undefined,
  size: number,
): { items: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    start = items.findIndex((item) => keyOf(item) > after);
    if (start === -1) start = items.length;
  }
  const slice = items.slice(start, start + size);
  const last = slice.at(-1);
  return start + size < items.length && last !== undefined
    ? { items: slice, nextCursor: encodeCursor(keyOf(last)) }
    : { items: slice };
}

export interface CatalogSourceOptions {
  pageSize?: number;
  logger: Logger;
}

/** The one SkillSource behind every namespace: listing shows each source's current commit; reads reach retained ones too. */
export type CatalogSkillSource = SkillSource & {
  readVerified(uri: string): Promise<SkillReadResult>;
  readBytes(uri: string): Promise<{ bytes: Uint8Array; mimeType: string }>;
};

export function catalogSkillSource(catalog: Catalog, options: CatalogSourceOptions): CatalogSkillSource {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const listings = new WeakMap<object, Skill[]>();
  const listing = (): Skill[] => {
    const state = catalog.state;
    let skills = listings.get(state);
    if (skills === undefined) {
      skills = catalog.listed().flatMap((ns) => ns.index.skills.map((skill) => skillEntry(ns, skill)));
      skills.sort((a, b) => compareText(a.uri, b.uri));
      listings.set(state, skills);
    }
    return skills;
  };

  /** The bytes of the file at `uri`, checked against the size and digest its manifest publishes. */
  const readBytes = async (uri: string): Promise<{ bytes: Uint8Array; mimeType: string }> => {
    const { ns, path } = locate(catalog, uri);
    const served = ns.files.get(path);
    if (served === undefined) {
      throw invalidParams(
        ns.dirs.has(path)
          ? `${uri} is a directory; read it with resources/directory/read`
          : `${uri}: no such file in ${namespaceUri(ns.source, ns.commit)}`,
        uri,
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await ns.readBlob(served.file.blob);
    } catch (error) {
      options.logger.error(
        { source: ns.source, commit: ns.commit, path: served.file.path, err: (error as Error).message },
        'blob read failed',
      );
      throw new ProtocolError(ProtocolErrorCode.InternalError, `internal error reading ${uri}`);
    }
    if (bytes.byteLength !== served.file.size || digestOf(bytes) !== served.file.digest) {
      options.logger.error(
        { source: ns.source, commit: ns.commit, path: served.file.path },
        'blob does not match its indexed digest',
      );
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `internal error reading ${uri}: stored bytes do not match the index`,
      );
    }
    return { bytes, mimeType: mimeTypeFor(basename(path)) };
  };

  const readVerified = async (uri: string): Promise<SkillReadResult> => {
    const { bytes, mimeType } = await readBytes(uri);
    // Spec §Reading: text whenever the bytes decode losslessly as UTF-8, otherwise a blob.
    const text = decodeUtf8(bytes);
    return text === undefined ? { bytes, mimeType } : { text, mimeType };
  };

  return {
    async list({ cursor }) {
      const result = page(listing(), (skill) => skill.uri, cursor, pageSize);
      return {
        skills: result.items,
        ...(result.nextCursor === undefined ? {} : { nextCursor: result.nextCursor }),
      };
    },
    async get(uri) {
      const { ns, path } = locate(catalog, uri);
      const skill = basename(path) === 'SKILL.md' ? ns.skills.get(dirname(path)) : undefined;
      if (skill === undefined) throw invalidParams(`No skill is served at ${uri}`, uri);
      return skillEntry(ns, skill);
    },
    read: readVerified,
    readVerified,
    readBytes,
    async readDirectory(uri, { cursor }) {
      const { ns, path } = locate(catalog, uri);
      const children = ns.dirs.get(path);
      if (children === undefined)
        throw invalidParams(
          ns.files.has(path)
            ? `${uri} is not a directory resource`
            : `${uri}: no such directory in ${namespaceUri(ns.source, ns.commit)}`,
          uri,
        );
      const resources: Resource[] = children.map((child) => {
        const childUri = namespaceUri(ns.source, ns.commit, join(path, child.name));
        return child.kind === 'directory'
          ? { uri: childUri, name: child.name, mimeType: DIRECTORY_MIME_TYPE }
          : {
              uri: childUri,
              name: child.name,
              mimeType: mimeTypeFor(child.name),
              size: ns.files.get(join(path, child.name))!.file.size,
            };
      });
      resources.sort((a, b) => compareText(a.uri, b.uri));
      const result = page(resources, (resource) => resource.uri, cursor, pageSize);
      return {
        resources: result.items,
        ...(result.nextCursor === undefined ? {} : { nextCursor: result.nextCursor }),
      };
    },
    async listResources() {
      return catalog.listed().flatMap((ns) =>
        ns.index.skills.map((skill) => ({
          uri: skillMdUri(ns, skill),
          name: skill.name,
          description: String(skill.frontmatter['description']),
          mimeType: 'text/markdown',
          _meta: provenance(ns, skill),
        })),
      );
    },
  };
}
