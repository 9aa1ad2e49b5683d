import {
  classifyInboundRequest,
  isJsonContentType,
  type McpServer,
  type ReadResourceResult,
  SERVER_INFO_META_KEY,
} from '@modelcontextprotocol/server';
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  type SkillReadResult,
} from '@modelcontextprotocol/server/ext/skills';
import { z } from 'zod';
import { sourceIdOf } from '../catalog/index.ts';
import type { CachePolicy } from './cache.ts';
import { MAX_CURSOR_CHARS } from './paging.ts';
import { SERVER_NAME, SERVER_VERSION } from '../shared/version.ts';
import { FIRST_MODERN_PROTOCOL, isModernProtocol } from './protocol.ts';
import type { PageText, ServingState } from './serving.ts';
import type { CatalogSkillSource } from './source.ts';
import { type SearchArguments, SKILL_SEARCH, searchAnswer, searchArguments } from './tools/search.ts';

const cursor = z.string().max(MAX_CURSOR_CHARS).optional();
const listParams = z.object({ cursor });
const getParams = z.object({ uri: z.string() });
const directoryParams = z.object({ uri: z.string(), cursor });

function toContents(uri: string, result: SkillReadResult): ReadResourceResult['contents'][number] {
  // A resources/read result: a content without a MIME type has no mimeType key (the SDK's schema, the JSON sent).
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/** The configured source that serves `id`: a ref of a `refs:` source is served under that source's settings. */
function configuredSource(serving: ServingState, id: string): string {
  return serving.state.sources.find((served) => served.id === id)?.group ?? id;
}

/**
 * skills/list, skills/get, resources/read and resources/directory/read answered from the snapshots, in place of
 * the extension's own handlers: those check every entry of an untrusted source on every request (the SDK trusts
 * only its own catalog), while ours were built once, from indexed and validated skills, and are frozen. Each
 * result carries its own cache hint (the SDK takes one for all): listings are short-lived, what a commit-pinned
 * URI names never changes.
 */
export function answerFromSnapshots(
  mcp: McpServer,
  serving: () => ServingState,
  source: CatalogSkillSource,
  cache: CachePolicy,
): void {
  const server = mcp.server;
  const modern = () => isModernProtocol(server.getNegotiatedProtocolVersion());
  // Every URI given here was just served, so it parsed: its authority is its source id.
  const pinnedHint = (uri: string) => cache.pinned(configuredSource(serving(), sourceIdOf(uri)));
  const pinned = (uri: string) => (modern() ? pinnedHint(uri) : {});
  // Fields in the order the SDK writes them (test/mcp/adapter.test.ts): a result's own hint, then `resultType`,
  // then `_meta`; a resource's hint (registerResource's) after `resultType`.
  const complete = 'complete' as const;
  server.removeRequestHandler(SKILLS_LIST_METHOD);
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: listParams }, async ({ cursor }) => {
    const { _meta, ...page } = serving().listing(cursor);
    return modern() ? { ...page, ...cache.listed, resultType: complete, _meta } : { ...page, _meta };
  });
  server.removeRequestHandler(SKILLS_GET_METHOD);
  server.setRequestHandler(SKILLS_GET_METHOD, { params: getParams }, async ({ uri }) => ({
    skill: await source.get(uri),
    ...pinned(uri),
  }));
  // The SDK's resources/read parses the URI with WHATWG URL first, which resolves `..` and `%2e%2e`
  // segments before any handler sees them; skillpin refuses those, so it reads the raw URI itself.
  server.removeRequestHandler('resources/read');
  server.setRequestHandler('resources/read', async ({ params: { uri } }) => {
    const contents = [toContents(uri, await source.read(uri))];
    return modern() ? { contents, resultType: complete, ...pinnedHint(uri) } : { contents };
  });
  server.removeRequestHandler(RESOURCES_DIRECTORY_READ_METHOD);
  server.setRequestHandler(
    RESOURCES_DIRECTORY_READ_METHOD,
    { params: directoryParams },
    async ({ uri, cursor }) => ({
      ...(await source.readDirectory(uri, { cursor })),
      ...pinned(uri),
    }),
  );
}

/** A lone skills/list request as the SDK would serve it with the handler above: its id and cursor. */
interface ListRequest {
  id: string | number;
  cursor: string | undefined;
}

/** A lone resources/read request as the SDK would serve it with the handler above: its id and URI. */
interface ReadRequest {
  id: string | number;
  uri: string;
}

/**
 * The id and params of `request` (its body `body`) when it is one 2026-07-28 `method` request that the SDK would
 * route to the handler above and answer with JSON: a POST of JSON, one request whose envelope and standard headers
 * its own classifier accepts, with the Mcp-Name header `name` (absent when `undefined`, else exactly that value, as
 * sent: no sentinel to decode), params of `keys` and `_meta` only. Anything else, `undefined`: the SDK answers it
 * (errors included).
 */
function loneRequest(
  request: Request,
  body: unknown,
  method: string,
  keys: readonly string[],
  name: (params: Record<string, unknown>) => string | undefined,
): { id: string | number; params: Record<string, unknown> } | undefined {
  const { headers } = request;
  const protocolVersionHeader = headers.get('mcp-protocol-version') ?? undefined;
  const mcpMethodHeader = headers.get('mcp-method') ?? undefined;
  if (request.method !== 'POST' || request.signal.aborted || !isJsonContentType(headers.get('content-type')))
    return undefined;
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined) return undefined;
  const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader, mcpMethodHeader, body });
  if (route.kind !== 'modern' || route.messageKind !== 'request') return undefined;
  if (route.classification.revision !== FIRST_MODERN_PROTOCOL) return undefined;
  const { id, params } = route.message;
  if (route.message.method !== method || params === undefined) return undefined;
  if (Object.keys(params).some((key) => key !== '_meta' && !keys.includes(key))) return undefined;
  if ((headers.get('mcp-name') ?? undefined) !== name(params)) return undefined;
  return { id, params };
}

/** The id and cursor of `request` when it is a lone skills/list (loneRequest; no Mcp-Name header). */
function listRequest(request: Request, body: unknown): ListRequest | undefined {
  const lone = loneRequest(request, body, SKILLS_LIST_METHOD, ['cursor'], () => undefined);
  if (lone === undefined) return undefined;
  const parsed = listParams.safeParse(lone.params);
  return parsed.success ? { id: lone.id, cursor: parsed.data.cursor } : undefined;
}

/**
 * The id and URI of `request` when it is a lone resources/read (loneRequest) of a skill:// URI, its Mcp-Name
 * header that URI as it is.
 */
function readRequest(request: Request, body: unknown): ReadRequest | undefined {
  const uriOf = (params: Record<string, unknown>) => {
    const { uri } = params;
    return typeof uri === 'string' && uri.startsWith('skill://') ? uri : undefined;
  };
  const lone = loneRequest(request, body, 'resources/read', ['uri'], uriOf);
  const uri = lone === undefined ? undefined : uriOf(lone.params);
  return uri === undefined ? undefined : { id: lone!.id, uri };
}

/** The id and arguments of `request` when it is a lone tools/call (loneRequest) of skill_search, its Mcp-Name header
 * the tool's name, with arguments the tool takes. */
function searchRequest(
  request: Request,
  body: unknown,
): { id: string | number; args: SearchArguments } | undefined {
  const nameOf = (params: Record<string, unknown>) =>
    params['name'] === SKILL_SEARCH ? SKILL_SEARCH : undefined;
  const lone = loneRequest(request, body, 'tools/call', ['name', 'arguments'], nameOf);
  if (lone === undefined || nameOf(lone.params) === undefined) return undefined;
  const args = searchArguments(lone.params['arguments']);
  return args === undefined ? undefined : { id: lone.id, args };
}

const SERVER_INFO = JSON.stringify({ name: SERVER_NAME, version: SERVER_VERSION });
const JSON_HEADERS = { 'Content-Type': 'application/json' };

/**
 * A skills/list answer written from the page's text: the bytes the SDK sends for the handler's result (members in
 * its order: the page, the hint, `resultType`, `_meta` with the server's info last; then `jsonrpc` and `id`).
 */
function listAnswer(text: PageText, hint: CachePolicy['listed'], id: string | number): Response {
  const parts = [
    Buffer.from('{"result":{'),
    text.entries,
    Buffer.from(
      `,"ttlMs":${hint.ttlMs},"cacheScope":${JSON.stringify(hint.cacheScope)},"resultType":"complete","_meta":{`,
    ),
    text.meta,
    Buffer.from(
      `,${JSON.stringify(SERVER_INFO_META_KEY)}:${SERVER_INFO}}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`,
    ),
  ];
  // The page's bytes are handed on as they are kept, not copied into one body.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: JSON_HEADERS });
}

/**
 * A lone 2026-07-28 skills/list request answered from the listing page's text, kept written, without a server:
 * the SDK would serialize the page for every request (most of a listing's CPU). `undefined` for any other request,
 * or a cursor the listing does not take: the SDK's server answers those. test/mcp/adapter.test.ts holds every
 * answer to the SDK's own, byte for byte.
 */
export function answerListing(
  serving: ServingState,
  cache: CachePolicy,
  request: Request,
  body: unknown,
): Response | undefined {
  const listed = listRequest(request, body);
  if (listed === undefined) return undefined;
  let text: PageText;
  try {
    text = serving.listingText(listed.cursor);
  } catch {
    return undefined;
  }
  return listAnswer(text, cache.listed, listed.id);
}

/**
 * A lone 2026-07-28 resources/read of a served file answered without a server: the file read as the handler above
 * reads it, written as the SDK writes that handler's result (the contents, `resultType`, the source's pinned hint,
 * `_meta` with the server's info; then `jsonrpc` and `id`). `undefined`, or a promise of it, for any other request
 * and for a read that fails: the SDK's server answers those, errors included. test/mcp/adapter.test.ts holds every
 * answer to the SDK's own, byte for byte.
 */
export function answerRead(
  serving: () => ServingState,
  source: CatalogSkillSource,
  cache: CachePolicy,
  request: Request,
  body: unknown,
): Promise<Response | undefined> | undefined {
  const asked = readRequest(request, body);
  if (asked === undefined) return undefined;
  const { id, uri } = asked;
  return source.read(uri).then(
    (file) => {
      const hint = cache.pinned(configuredSource(serving(), sourceIdOf(uri)));
      return resultAnswer({ contents: [toContents(uri, file)], resultType: 'complete', ...hint }, id);
    },
    () => undefined,
  );
}

/** A result as the SDK writes it: the handler's members, `_meta` with the server's info; then `jsonrpc` and `id`. */
function resultAnswer(result: Record<string, unknown>, id: string | number): Response {
  const meta = { _meta: { [SERVER_INFO_META_KEY]: { name: SERVER_NAME, version: SERVER_VERSION } } };
  return new Response(JSON.stringify({ result: { ...result, ...meta }, jsonrpc: '2.0', id }), {
    status: 200,
    headers: JSON_HEADERS,
  });
}

/**
 * A lone 2026-07-28 tools/call of skill_search answered without a server: the search the tool runs, its result
 * written as the SDK writes it. A server per request registers every tool, and the SDK converts their schemas at
 * each call: work a search does not need. `undefined` for any other request, arguments the tool does not
 * take, and an answer that is an error: the SDK's server answers those. test/mcp/adapter.test.ts holds every
 * answer to the server's own, byte for byte.
 */
export async function answerSearch(
  serving: ServingState,
  request: Request,
  body: unknown,
): Promise<Response | undefined> {
  const asked = searchRequest(request, body);
  if (asked === undefined) return undefined;
  const result = await searchAnswer(serving, asked.args).catch(() => undefined);
  return result === undefined || result.isError === true
    ? undefined
    : resultAnswer({ ...result, resultType: 'complete' }, asked.id);
}

/** A request answered without a server: its method (what metrics count it as) and the response. */
export interface DirectAnswer {
  method: string;
  response: Response;
}

/** What a caller is served, for the answers without a server. */
export interface DirectCaller {
  current: () => ServingState;
  source: CatalogSkillSource;
  /** skill_search is served (tools are on). */
  search: boolean;
}

/**
 * A lone 2026-07-28 request answered without a server where one of the answers above takes it (the Mcp-Method
 * header, checked against the body by each, says which); `undefined`: a server answers it.
 */
export async function answerDirect(
  caller: DirectCaller,
  cache: CachePolicy,
  request: Request,
  body: unknown,
): Promise<DirectAnswer | undefined> {
  const method = request.headers.get('mcp-method');
  let response: Response | undefined;
  if (method === SKILLS_LIST_METHOD) response = answerListing(caller.current(), cache, request, body);
  else if (method === 'resources/read')
    response = await answerRead(caller.current, caller.source, cache, request, body);
  else if (method === 'tools/call' && caller.search)
    response = await answerSearch(caller.current(), request, body);
  return method === null || response === undefined ? undefined : { method, response };
}
