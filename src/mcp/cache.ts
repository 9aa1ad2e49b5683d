import type { CacheHint } from '@modelcontextprotocol/server';
import type { SourceConfig } from '../config/index.ts';
import { DEFAULT_CACHE_TTL } from '../config/rules.ts';

type Hint = Required<CacheHint>;

/** `ttlMs` and `cacheScope` for each 2026-07-28 result (SEP-2549), decided per result. */
export interface CachePolicy {
  /** skills/list, resources/list, prompts/list, tools/list, resources/templates/list. */
  readonly listed: Hint;
  /** skills/get, resources/read and resources/directory/read of a URI in `source`'s namespaces. */
  pinned(source: string): Hint;
}

/**
 * The policy of a config: each source keeps its own scope; a listing mixes every source, so a shared cache
 * may keep it only when it may keep each of them. A source the policy does not know is private, and so is
 * everything once the server authenticates its callers: each gets answers of its own.
 */
export function cachePolicy(
  ttl: { listTtlMs: number; pinnedTtlMs: number } = DEFAULT_CACHE_TTL,
  sources: ReadonlyArray<Pick<SourceConfig, 'id' | 'cacheScope'>> = [],
  authenticates = false,
): CachePolicy {
  const scopeOf = (source: Pick<SourceConfig, 'cacheScope'>) =>
    authenticates ? 'private' : (source.cacheScope ?? 'private');
  const pinned = new Map<string, Hint>(
    sources.map((source) => [source.id, { ttlMs: ttl.pinnedTtlMs, cacheScope: scopeOf(source) }]),
  );
  const unknown: Hint = { ttlMs: ttl.pinnedTtlMs, cacheScope: 'private' };
  const shared = sources.length > 0 && sources.every((source) => scopeOf(source) === 'public');
  return {
    listed: { ttlMs: ttl.listTtlMs, cacheScope: shared ? 'public' : 'private' },
    pinned: (source) => pinned.get(source) ?? unknown,
  };
}
