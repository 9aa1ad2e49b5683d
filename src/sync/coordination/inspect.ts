import type { CoordinationConfig, SourceConfig } from '../../config/index.ts';
import type { CoordinationStatus, SourceReplicas } from '../../shared/status.ts';
import { coordinated, sharedKey } from './coordination.ts';
import { connectReader, downReason, millisOf, type RedisReader } from './redis.ts';
import { pairsOf, viewOf } from './reports.ts';
import { keysOf } from './scripts.ts';

/** What `skillpin status` shows of coordination: whether Redis answers, and per shared source what the replicas serve. */
export interface ReplicasRead {
  coordination: CoordinationStatus;
  /** By source id; empty when Redis does not answer. */
  replicas: Map<string, SourceReplicas>;
}

/** What the replicas serve of one source, as `/status` shows it, read without writing anything back. */
async function readSource(reader: RedisReader, keyPrefix: string, source: SourceConfig, now: number) {
  const keys = keysOf(keyPrefix, sharedKey(source));
  const [fields, holder, agreed] = await Promise.all([
    reader.command<Record<string, string> | string[]>(['HGETALL', keys.served]),
    reader.command<string | null>(['HGET', keys.lease, 'replica']),
    reader.command<string | null>(['GET', keys.agreed]),
  ]);
  return viewOf(pairsOf(fields), holder, agreed, now).view;
}

/**
 * Reads what the replicas of `sources` report through Redis, over one connection that only reads (no lease taken,
 * no report or agreement written: `skillpin status` is no replica), within the connect timeout. Redis down: the
 * reason (redacted), and no replicas. `since`: when it read, on Redis's clock when it answers (`at` otherwise).
 */
export async function readReplicas(
  config: CoordinationConfig,
  sources: readonly SourceConfig[],
  at: Date,
): Promise<ReplicasRead> {
  const state = { redis: config.endpoint, replica: null, since: at.toISOString(), refused: [] };
  const down = (error: string): ReplicasRead => ({
    coordination: { ...state, state: 'down', error },
    replicas: new Map(),
  });
  const connected = await connectReader(config);
  if ('error' in connected) return down(connected.error);
  const { reader } = connected;
  try {
    const now = millisOf(await reader.command<[string, string]>(['TIME']));
    if (now === undefined) return down('Redis answered TIME with no time');
    const shared = sources.filter(coordinated);
    const views = await Promise.all(
      shared.map((source) => readSource(reader, config.keyPrefix, source, now)),
    );
    return {
      coordination: { ...state, state: 'up', since: new Date(now).toISOString(), error: null },
      replicas: new Map(shared.map((source, i) => [source.id, views[i]!])),
    };
  } catch (error) {
    return down(downReason(error));
  } finally {
    await reader.close();
  }
}
