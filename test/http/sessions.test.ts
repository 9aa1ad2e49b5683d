import type { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import {
  createSessionStore,
  DEFAULT_SESSION_LIMITS,
  MAX_SESSIONS,
  MAX_SESSIONS_PER_ADDRESS,
  NEW_SESSIONS_PER_ADDRESS_PER_MINUTE,
  SESSION_IDLE_MS,
  SESSION_PROTECTED_MS,
  type Session,
} from '../../src/http/sessions.ts';

/** A store with a clock the test moves, and sessions that record when they are closed. */
function store(limits: Partial<typeof DEFAULT_SESSION_LIMITS> = {}) {
  let now = 0;
  const closed: string[] = [];
  /** Each session opened, by id: what `use` must give back. */
  const opened = new Map<string, Session>();
  const sessions = createSessionStore({ ...DEFAULT_SESSION_LIMITS, ...limits }, () => now);
  const session = (id: string, address: string): Session => ({
    transport: {
      close: async () => {
        closed.push(id);
        sessions.remove(id);
      },
    } as unknown as WebStandardStreamableHTTPServerTransport,
    server: {} as McpServer,
    address,
  });
  /** Asks for room as `address` and, when granted, opens session `id`. */
  const open = async (id: string, address = '192.0.2.1') => {
    const refused = await sessions.admit(address);
    if (refused !== undefined) return refused;
    opened.set(id, session(id, address));
    sessions.add(id, opened.get(id)!);
    sessions.settle(address);
    return undefined;
  };
  return {
    sessions,
    closed,
    opened,
    open,
    at: (ms: number) => {
      now = ms;
    },
  };
}

describe('2025-11-25 sessions', () => {
  it('has the documented limits', () => {
    expect([
      MAX_SESSIONS,
      SESSION_IDLE_MS,
      SESSION_PROTECTED_MS,
      NEW_SESSIONS_PER_ADDRESS_PER_MINUTE,
      MAX_SESSIONS_PER_ADDRESS,
    ]).toEqual([256, 30 * 60_000, 60_000, 30, 32]);
  });

  it('lets one address hold a bounded number of sessions: past it its own least recently used one makes room', async () => {
    const { sessions, closed, open, at } = store({ perAddress: 2, perAddressPerMinute: 100 });
    expect(await open('a', '192.0.2.1')).toBeUndefined();
    expect(await open('b', '192.0.2.1')).toBeUndefined();
    expect(await open('c', '192.0.2.1')).toEqual({
      status: 429,
      retryAfterSeconds: 60,
      message:
        'this address holds 2 open sessions, the most one address may, all used in the last 60 s; end one (DELETE) or retry later',
    });
    // Another address is not held back; an older session of another address is not closed for this one.
    expect(await open('x', '192.0.2.2')).toBeUndefined();
    at(SESSION_PROTECTED_MS);
    expect(sessions.use('a')).toBeDefined();
    expect(await open('c', '192.0.2.1')).toBeUndefined();
    expect(closed).toEqual(['b']);
    expect(await open('d', '192.0.2.1')).toMatchObject({ status: 429 });
    expect([sessions.use('a'), sessions.use('c'), sessions.use('x')].every(Boolean)).toBe(true);
  });

  it('when full, closes the least recently used session, never one used in the last minute', async () => {
    const { sessions, closed, opened, open, at } = store({ maxSessions: 3 });
    await open('a', '192.0.2.1');
    await open('b', '192.0.2.2');
    await open('c', '192.0.2.3');
    expect(await open('d', '192.0.2.4')).toEqual({
      status: 503,
      retryAfterSeconds: 60,
      message: 'all 3 sessions are in use; retry later',
    });
    at(SESSION_PROTECTED_MS);
    expect(sessions.use('a')).toBe(opened.get('a'));
    expect(await open('e', '192.0.2.4')).toBeUndefined();
    expect(await open('f', '192.0.2.5')).toBeUndefined();
    expect(closed).toEqual(['b', 'c']);
    expect(await open('g', '192.0.2.6')).toMatchObject({ status: 503 });
    expect(sessions.use('a')).toBe(opened.get('a'));
    expect(sessions.use('b')).toBeUndefined();
  });

  it('lets one address ask for a limited number of sessions a minute', async () => {
    const { open, at } = store({ perAddressPerMinute: 2 });
    expect(await open('a')).toBeUndefined();
    at(10_000);
    expect(await open('b')).toBeUndefined();
    expect(await open('c')).toEqual({
      status: 429,
      retryAfterSeconds: 50,
      message: 'too many new sessions from this address; at most 2 a minute',
    });
    expect(await open('c', '192.0.2.99')).toBeUndefined();
    at(60_000);
    expect(await open('d')).toBeUndefined();
  });

  it('closes sessions idle for longer than the limit, and keeps those in use', async () => {
    const { sessions, closed, opened, open, at } = store();
    await open('a', '192.0.2.1');
    await open('b', '192.0.2.2');
    at(SESSION_IDLE_MS - 1);
    sessions.use('b');
    await sessions.expire();
    expect(closed).toEqual([]);
    at(SESSION_IDLE_MS);
    await sessions.expire();
    expect(closed).toEqual(['a']);
    expect(sessions.use('b')).toBe(opened.get('b'));
    expect(sessions.use('a')).toBeUndefined();
  });

  it('counts a session being opened against the limit before it has an id', async () => {
    const { sessions } = store({ maxSessions: 1 });
    expect(await sessions.admit('192.0.2.1')).toBeUndefined();
    expect(await sessions.admit('192.0.2.2')).toMatchObject({ status: 503 });
    sessions.settle('192.0.2.1');
    expect(await sessions.admit('192.0.2.2')).toBeUndefined();
  });
});
