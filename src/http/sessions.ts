import type { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Caller } from '../mcp/caller.ts';

/** Open 2025-11-25 sessions at most. */
export const MAX_SESSIONS = 256;
/** A session that sends no request for this long is closed (its client starts a new one, spec: on a 404). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A session that sent a request this recently is never closed to make room for a new one. */
export const SESSION_PROTECTED_MS = 60_000;
/** New sessions one address may ask for per minute. */
export const NEW_SESSIONS_PER_ADDRESS_PER_MINUTE = 30;
/** Open sessions one address may hold: a few addresses cannot hold the whole table. */
export const MAX_SESSIONS_PER_ADDRESS = 32;

const MINUTE_MS = 60_000;

export interface SessionLimits {
  maxSessions: number;
  idleMs: number;
  protectedMs: number;
  perAddressPerMinute: number;
  perAddress: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = {
  maxSessions: MAX_SESSIONS,
  idleMs: SESSION_IDLE_MS,
  protectedMs: SESSION_PROTECTED_MS,
  perAddressPerMinute: NEW_SESSIONS_PER_ADDRESS_PER_MINUTE,
  perAddress: MAX_SESSIONS_PER_ADDRESS,
};

export interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  /** Who opened it (with auth): only that caller, seeing the same sources, may use it. */
  caller?: Caller;
  /** The address it was opened from. */
  address: string;
}

/** Why a new session is refused: the HTTP status, when to retry, and a sentence. */
export interface SessionRefusal {
  status: 429 | 503;
  retryAfterSeconds: number;
  message: string;
}

export interface SessionStore {
  /** The open session with this id, marked as used now; `undefined` when there is none. */
  use(id: string): Session | undefined;
  /**
   * Asks for room for one new session from `address`: idle sessions are closed first, then the least recently
   * used one of that address if it holds `perAddress`, then the least recently used one if the store is full; a
   * protected session is never closed. `undefined` grants it; call `settle` with the same address once its first
   * exchange is over, whether or not it became a session.
   */
  admit(address: string): Promise<SessionRefusal | undefined>;
  settle(address: string): void;
  add(id: string, session: Session): void;
  remove(id: string): void;
  /** Closes the sessions idle for longer than the limit. */
  expire(): Promise<void>;
  sessions(): Iterable<Session>;
  closeAll(): Promise<void>;
}

interface Entry {
  session: Session;
  lastUsed: number;
}

export function createSessionStore(limits: SessionLimits, now: () => number = Date.now): SessionStore {
  // Least recently used first: a use moves the entry to the end.
  const open = new Map<string, Entry>();
  const asked = new Map<string, { since: number; count: number }>();
  // Sessions open or being opened, per address and in all.
  const held = new Map<string, number>();
  let pending = 0;

  const count = (address: string, by: number) => {
    const next = (held.get(address) ?? 0) + by;
    if (next === 0) held.delete(address);
    else held.set(address, next);
  };

  const close = async (id: string, entry: Entry) => {
    if (open.delete(id)) count(entry.session.address, -1);
    await entry.session.transport.close().catch(() => undefined);
  };

  const expire = async (at: number) => {
    for (const [id, entry] of open) {
      if (at - entry.lastUsed < limits.idleMs) break;
      await close(id, entry);
    }
    for (const [address, window] of asked) if (at - window.since >= MINUTE_MS) asked.delete(address);
  };

  /** Makes room by closing the least recently used session (of `address` only, when given) unless protected. */
  const evict = async (at: number, address?: string): Promise<boolean> => {
    for (const [id, entry] of open) {
      if (address !== undefined && entry.session.address !== address) continue;
      if (at - entry.lastUsed < limits.protectedMs) return false;
      await close(id, entry);
      return true;
    }
    return false;
  };

  const refusal = (status: 429 | 503, retryAfterSeconds: number, message: string): SessionRefusal => ({
    status,
    retryAfterSeconds,
    message,
  });

  return {
    use(id) {
      const entry = open.get(id);
      if (entry === undefined) return undefined;
      open.delete(id);
      open.set(id, { session: entry.session, lastUsed: now() });
      return entry.session;
    },
    async admit(address) {
      const at = now();
      await expire(at);
      const window = asked.get(address) ?? { since: at, count: 0 };
      asked.set(address, window);
      if (window.count >= limits.perAddressPerMinute)
        return refusal(
          429,
          Math.ceil((window.since + MINUTE_MS - at) / 1000),
          `too many new sessions from this address; at most ${limits.perAddressPerMinute} a minute`,
        );
      window.count++;
      if ((held.get(address) ?? 0) >= limits.perAddress && !(await evict(at, address)))
        return refusal(
          429,
          Math.ceil(limits.protectedMs / 1000),
          `this address holds ${limits.perAddress} open sessions, the most one address may, all used in the last ` +
            `${Math.ceil(limits.protectedMs / 1000)} s; end one (DELETE) or retry later`,
        );
      if (open.size + pending >= limits.maxSessions && !(await evict(at)))
        return refusal(
          503,
          Math.ceil(limits.protectedMs / 1000),
          `all ${limits.maxSessions} sessions are in use; retry later`,
        );
      pending++;
      count(address, 1);
      return undefined;
    },
    settle(address) {
      pending--;
      count(address, -1);
    },
    add(id, session) {
      open.set(id, { session, lastUsed: now() });
      count(session.address, 1);
    },
    remove(id) {
      const entry = open.get(id);
      if (entry !== undefined && open.delete(id)) count(entry.session.address, -1);
    },
    expire: () => expire(now()),
    sessions: () => [...open.values()].map((entry) => entry.session),
    async closeAll() {
      await Promise.all([...open].map(([id, entry]) => close(id, entry)));
    },
  };
}
