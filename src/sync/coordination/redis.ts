import { createClient } from '@redis/client';
import type { CoordinationConfig } from '../../config/index.ts';
import type { Logger } from '../../shared/log.ts';
import { redact, rememberSecret } from '../../shared/redact.ts';
import { messageOf } from '../../shared/text.ts';
import type { Clock } from '../../shared/clock.ts';
import type { CoordinationStatus } from '../../shared/status.ts';

/** Published messages longer than this are not ours: ignored. */
const MAX_MESSAGE_BYTES = 1024;
/** How long the first start waits for the subscription once connected (it is in place before anyone announces). */
const SUBSCRIBE_WAIT_MS = 500;

const DOWN =
  'coordination down: Redis does not answer; every source is followed by this replica on its own until it does';

/** The one connection to Redis (and its subscriber): commands that never throw, and whether Redis answers. */
export interface RedisLink {
  /** One command; `undefined` when it failed (the link is down then, until Redis answers again). */
  command<T>(args: string[]): Promise<T | undefined>;
  /** A Lua script (EVAL) on `keys` with `args`. */
  script<T>(source: string, keys: string[], args: string[]): Promise<T | undefined>;
  /** Redis's clock (`TIME`), ms since the epoch: what leases and publications are timed by. */
  time(): Promise<number | undefined>;
  status(): LinkStatus;
  close(): Promise<void>;
}

/** What the link knows of coordination's status: whether Redis answers, and why not. */
export type LinkStatus = Omit<CoordinationStatus, 'refused'>;

/**
 * Why Redis does not answer, as status and logs say it: a refused password is named as such (the client keeps
 * retrying it, so it would otherwise show as `connecting` for ever); anything else is the client's error, redacted.
 */
export function downReason(error: unknown): string {
  const message = messageOf(error);
  if (message.startsWith('WRONGPASS'))
    return 'authentication failed: Redis refused the username or password of the URL (WRONGPASS)';
  if (message.startsWith('NOAUTH'))
    return 'authentication failed: Redis requires a password and the URL gives none (NOAUTH)';
  return redact(message);
}

export interface RedisLinkOptions {
  config: CoordinationConfig;
  /** This replica's id, for status. */
  replica: string;
  logger: Logger;
  clock: Clock;
  /** The channel every replica publishes on and listens to. */
  channel: string;
  onMessage(message: string): void;
  /** Redis answers (again): what this replica reports is written now. */
  onUp(): void;
}

/** A client of `config`'s Redis (its password remembered as a secret) that never queues a command while away. */
function clientOf(config: CoordinationConfig, reconnectStrategy: false | ((retries: number) => number)) {
  const url = new URL(config.redis);
  if (url.password !== '') rememberSecret(decodeURIComponent(url.password), decodeURIComponent(url.username));
  return createClient({
    url: config.redis,
    socket: {
      connectTimeout: config.connectTimeoutMs,
      reconnectStrategy,
      ...(config.tls === undefined ? {} : { tls: true as const, ca: config.tls.ca }),
    },
    disableOfflineQueue: true,
    commandOptions: { timeout: config.commandTimeoutMs },
  });
}

/** A connection that only reads (`skillpin status`): one try, no subscription; a command that fails throws. */
export interface RedisReader {
  command<T>(args: string[]): Promise<T>;
  close(): Promise<void>;
}

/**
 * Connects once to Redis to read, within the connect timeout; `error`: why it does not answer (redacted, as
 * `downReason` says it).
 */
export async function connectReader(
  config: CoordinationConfig,
): Promise<{ reader: RedisReader } | { error: string }> {
  const client = clientOf(config, false);
  let failed: unknown;
  client.on('error', (error: unknown) => {
    failed ??= error;
  });
  const close = async () => {
    if (client.isReady) await client.close().catch(() => client.destroy());
    else client.destroy();
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), config.connectTimeoutMs + 100);
  });
  try {
    const connected = await Promise.race([client.connect().then(() => 'ready' as const), timedOut]);
    if (connected === 'timeout') throw failed ?? new Error(`no answer within ${config.connectTimeoutMs} ms`);
  } catch (error) {
    await close();
    return { error: downReason(error) };
  } finally {
    clearTimeout(timer);
  }
  return {
    reader: { command: (args) => client.sendCommand(args, { timeout: config.commandTimeoutMs }), close },
  };
}

/**
 * Connects to Redis (the only module that loads the client): reconnects behind for as long as the replica runs,
 * and never queues a command while Redis is away (it fails at once, and the replica goes on alone). Resolves once
 * connected and subscribed, or after the connect timeout (down then). Its password is remembered as a secret: no
 * log or status shows it.
 */
export async function connectRedis(options: RedisLinkOptions): Promise<RedisLink> {
  const { config, logger, clock } = options;
  const timeout = config.commandTimeoutMs;
  // 100 ms, 200 ms, … at most 5 s apart.
  const client = clientOf(config, (retries: number) => Math.min(100 * 2 ** Math.min(retries, 6), 5_000));
  const subscriber = client.duplicate();

  let state: LinkStatus = {
    state: 'down',
    redis: config.endpoint,
    replica: options.replica,
    since: new Date(clock.now()).toISOString(),
    error: 'connecting',
  };
  let closed = false;
  let everUp = false;
  const setState = (up: boolean, error?: unknown) => {
    if (closed) return;
    const detail = error === undefined ? null : downReason(error);
    if (up === (state.state === 'up')) {
      // Still down, for a reason said now (the first answer replaces `connecting`): logged once per reason.
      if (!up && detail !== null && detail !== state.error) {
        state = { ...state, error: detail };
        logger.warn({ redis: config.endpoint, err: detail }, DOWN);
      }
      return;
    }
    state = {
      ...state,
      state: up ? 'up' : 'down',
      since: new Date(clock.now()).toISOString(),
      error: detail,
    };
    if (!up) {
      logger.warn({ redis: config.endpoint, err: detail }, DOWN);
      return;
    }
    logger.info(
      { redis: config.endpoint },
      everUp ? 'coordination resumed: Redis answers again' : 'coordination up',
    );
    everUp = true;
    options.onUp();
  };
  const bothReady = () => client.isReady && subscriber.isReady;
  for (const emitter of [client, subscriber]) {
    emitter.on('ready', () => setState(bothReady()));
    emitter.on('error', (error: unknown) => setState(false, error));
    emitter.on('end', () => setState(false, new Error('connection closed')));
  }
  const command = async <T>(args: string[]): Promise<T | undefined> => {
    if (closed) return undefined;
    try {
      const answer = await client.sendCommand<T>(args, { timeout });
      // A command that timed out leaves the connection ready: the next answer brings coordination back.
      if (bothReady()) setState(true);
      return answer;
    } catch (error) {
      setState(false, error);
      return undefined;
    }
  };

  const onMessage = (message: string) => {
    if (message.length <= MAX_MESSAGE_BYTES) options.onMessage(message);
  };
  void client.connect().catch(() => undefined);
  // node-redis subscribes again after each reconnect.
  void subscriber
    .connect()
    .then(() => subscriber.subscribe(options.channel, onMessage))
    .catch(() => undefined);
  await connected(client, subscriber, config.connectTimeoutMs);
  setState(bothReady());

  return {
    command,
    script: (source, keys, args) => command(['EVAL', source, String(keys.length), ...keys, ...args]),
    time: async () => millisOf(await command<[string, string]>(['TIME'])),
    status: () => state,
    async close() {
      closed = true;
      for (const connection of [subscriber, client]) {
        try {
          if (connection.isReady) await connection.close();
          else connection.destroy();
        } catch {
          connection.destroy();
        }
      }
    },
  };
}

/** Redis's `TIME` answer (seconds, microseconds) in ms since the epoch; `undefined` when it is not one. */
export function millisOf(time: readonly [string, string] | undefined): number | undefined {
  const ms = time === undefined ? Number.NaN : Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** A connection as `connected` watches it. */
interface Watched {
  readonly isReady: boolean;
  on(event: 'ready', listener: () => void): unknown;
}

/** Waits for both connections and the subscription, at most `timeoutMs` (the first syncs wait that long). */
async function connected(
  client: Watched,
  subscriber: Watched & { readonly isPubSubActive: boolean },
  timeoutMs: number,
): Promise<void> {
  const ready = () => client.isReady && subscriber.isReady;
  await new Promise<void>((resolve) => {
    if (ready()) return resolve();
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    const check = () => {
      if (!ready()) return;
      clearTimeout(timer);
      resolve();
    };
    client.on('ready', check);
    subscriber.on('ready', check);
  });
  const until = Date.now() + SUBSCRIBE_WAIT_MS;
  while (ready() && !subscriber.isPubSubActive && Date.now() < until)
    await new Promise((resolve) => setTimeout(resolve, 10));
}
