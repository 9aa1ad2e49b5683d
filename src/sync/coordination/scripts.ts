/**
 * The keys of the Redis coordination, and the Lua scripts it runs: each script reads and writes in one step on the
 * server, so two replicas never both see a lease free and both take it. Every time that decides a lease or the
 * freshness of a publication is Redis's (`TIME`, key expiry), in milliseconds since the epoch: never a replica's.
 */

/** How long Redis keeps a published commit or reports nobody refreshes (a cleanup, not a rule). */
export const KEEP_MS = 7 * 86_400_000;

/** A shared source's keys (`<prefix>lease:<id>:<digest>` and so on). */
export const keysOf = (prefix: string, key: string) => ({
  lease: `${prefix}lease:${key}`,
  fence: `${prefix}fence:${key}`,
  commit: `${prefix}commit:${key}`,
  served: `${prefix}served:${key}`,
  agreed: `${prefix}agreed:${key}`,
});

/** A replica id as this code writes it (`host/pid/nonce`): anything else read from Redis is not shown. */
const REPLICA_ID = /^[A-Za-z0-9._-]{1,253}\/\d{1,10}\/[0-9A-Za-z]{1,64}$/;
export const replicaOf = (text: string | null | undefined) =>
  text != null && REPLICA_ID.test(text) ? text : undefined;

/** Redis's time in ms since the epoch, in a script (`TIME` is allowed: Redis ≥ 5 replicates a script's effects). */
const NOW = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/**
 * Takes or renews a poll lease. KEYS: lease (a hash: replica, token, expiresAt; the key expires with the lease on
 * Redis's clock), fence (a counter). ARGV: replica, lease ms. A lease whose key expired is taken under a new fencing
 * token; the holder's own renewal keeps its token. Returns {1|0, holder, ms left, token, Redis's now}: 1 when this
 * replica holds it now; ms left -1 for a lease key with no expiry (not one a replica wrote: held until it changes).
 */
export const ACQUIRE = `
${NOW}
local holder = redis.call('HGET', KEYS[1], 'replica')
if holder and holder ~= ARGV[1] then
  return {0, holder, redis.call('PTTL', KEYS[1]), redis.call('HGET', KEYS[1], 'token') or '', now}
end
local token = holder and redis.call('HGET', KEYS[1], 'token') or tostring(redis.call('INCR', KEYS[2]))
local ms = tonumber(ARGV[2])
-- expiresAt (Redis's clock) is for whoever reads the hash; the key's own expiry is what ends the lease.
redis.call('HSET', KEYS[1], 'replica', ARGV[1], 'token', token, 'expiresAt', string.format('%d', now + ms))
redis.call('PEXPIRE', KEYS[1], ms)
return {1, ARGV[1], ms, token, now}
`;

/** Gives a lease up when it is still this replica's. KEYS: lease. ARGV: replica. */
export const RELEASE = `
if redis.call('HGET', KEYS[1], 'replica') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Publishes the commit the lease holder resolved, fenced: only while the lease (unexpired on Redis's clock) names
 * this replica and token.
 * KEYS: lease, commit (a hash). ARGV: replica, token, at, commit, tag, ref, channel, message, Redis expiry ms, mac
 * (publication.ts: the followers check it, since anyone who can write to Redis can write this hash), refs (a
 * `refs:` source's listing, or ''), what (the commit, or the listing's digest: a change is announced).
 * Returns 0 (not the holder: nothing written), 1 (the same again) or 2 (something new, announced).
 */
export const PUBLISH = `
if redis.call('HGET', KEYS[1], 'replica') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'token') ~= ARGV[2] then
  return 0
end
local before = redis.call('HGET', KEYS[2], 'what')
redis.call('HSET', KEYS[2], 'commit', ARGV[4], 'tag', ARGV[5], 'ref', ARGV[6], 'refs', ARGV[11], 'what', ARGV[12], 'token', ARGV[2], 'by', ARGV[1], 'at', ARGV[3], 'mac', ARGV[10])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
if before ~= ARGV[12] then
  redis.call('PUBLISH', ARGV[7], ARGV[8])
  return 2
end
return 1
`;

/**
 * Reads a publication's fields, unless its `refs` field is longer than a holder writes (anyone who can write to
 * Redis can write this hash: a follower never takes an unbounded value into memory). KEYS: commit. ARGV: most bytes
 * of `refs`, then the field names. Returns {1, fields} or {0, the length of refs}.
 */
export const READ_PUBLICATION = `
local size = redis.call('HSTRLEN', KEYS[1], 'refs')
if size > tonumber(ARGV[1]) then return {0, size} end
return {1, redis.call('HMGET', KEYS[1], unpack(ARGV, 2))}
`;
