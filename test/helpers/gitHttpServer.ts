/**
 * A small smart-HTTP git server for tests: `git http-backend` run as CGI
 * behind a node:http server on 127.0.0.1 (random port).
 *
 * - Serves every repository under `root` (GIT_HTTP_EXPORT_ALL), e.g. a bare
 *   repo at `<root>/skills.git` is `urlFor('skills.git')`.
 * - Extra git config (e.g. `uploadpack.allowAnySHA1InWant: 'true'`) is given
 *   to http-backend/upload-pack through GIT_CONFIG_COUNT/KEY_n/VALUE_n;
 *   system and user config are ignored (GIT_CONFIG_NOSYSTEM, HOME and
 *   XDG_CONFIG_HOME point at a private temp dir).
 * - Request bodies are buffered; `Content-Encoding: gzip` bodies (git
 *   gzips large POSTs) are inflated before they reach http-backend, which
 *   then gets an exact CONTENT_LENGTH.
 * - Optional basic auth: without the right `Authorization: Basic …` the
 *   answer is 401 with `WWW-Authenticate: Basic realm="git"`.
 * - Every request is recorded in `requests` (method, path, query, status).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

export interface GitHttpServerOptions {
  /** Folder whose repositories are served (GIT_PROJECT_ROOT). */
  root: string;
  /** Extra git config for http-backend / upload-pack, e.g. `{ 'uploadpack.allowAnySHA1InWant': 'true' }`. */
  config?: Record<string, string>;
  /** When set, every request must carry these credentials as HTTP basic auth. */
  auth?: { username: string; password: string };
}

export interface GitHttpRequestRecord {
  method: string;
  /** URL path without the query string, e.g. `/skills.git/info/refs`. */
  path: string;
  /** Query string without the `?`, e.g. `service=git-upload-pack` ('' when none). */
  query: string;
  /** HTTP status sent to the client. */
  status: number;
  /** An upload-pack request that asks for objects (protocol v2 `command=fetch`, or v0/v1 `want` lines). */
  fetch: boolean;
  /**
   * A protocol v2 listing of the refs (`command=ls-refs`). In v0/v1 the refs come with every `info/refs`
   * advertisement, a fetch's included.
   */
  lsRefs: boolean;
}

export interface GitHttpServer {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** URL of one repository under `root`, e.g. `urlFor('skills.git')`. */
  urlFor(repo: string): string;
  /** Every request served so far, in the order they finished. */
  requests: GitHttpRequestRecord[];
  /** Stops the server, kills running http-backend processes, removes the temp HOME. */
  close(): Promise<void>;
}

const HEADER_END_CRLF = Buffer.from('\r\n\r\n');
const HEADER_END_LF = Buffer.from('\n\n');

function findHeaderEnd(buf: Buffer): { at: number; sepLen: number } | undefined {
  const crlf = buf.indexOf(HEADER_END_CRLF);
  const lf = buf.indexOf(HEADER_END_LF);
  if (crlf === -1 && lf === -1) return undefined;
  if (crlf !== -1 && (lf === -1 || crlf <= lf)) return { at: crlf, sepLen: 4 };
  return { at: lf, sepLen: 2 };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function checkAuth(req: IncomingMessage, auth: { username: string; password: string }): boolean {
  const header = req.headers.authorization;
  if (!header) return false;
  const match = /^Basic\s+(.+)$/i.exec(header.trim());
  if (!match?.[1]) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded === `${auth.username}:${auth.password}`;
}

export async function startGitHttpServer(opts: GitHttpServerOptions): Promise<GitHttpServer> {
  const root = path.resolve(opts.root);
  const home = await mkdtemp(path.join(os.tmpdir(), 'git-http-home-'));
  const requests: GitHttpRequestRecord[] = [];
  const children = new Set<ChildProcess>();

  const configEntries = Object.entries(opts.config ?? {});
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(home, 'gitconfig'),
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    SERVER_SOFTWARE: 'skillpin-test-git-http',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_COUNT: String(configEntries.length),
  };
  configEntries.forEach(([key, value], i) => {
    baseEnv[`GIT_CONFIG_KEY_${i}`] = key;
    baseEnv[`GIT_CONFIG_VALUE_${i}`] = value;
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const parsed = new URL(req.url ?? '/', 'http://127.0.0.1');
    const record: GitHttpRequestRecord = {
      method,
      path: parsed.pathname,
      query: parsed.search.replace(/^\?/, ''),
      status: 0,
      fetch: false,
      lsRefs: false,
    };
    const finish = (status: number): void => {
      record.status = status;
      requests.push(record);
    };

    if (opts.auth && !checkAuth(req, opts.auth)) {
      req.resume();
      res.writeHead(401, {
        'WWW-Authenticate': 'Basic realm="git"',
        'Content-Type': 'text/plain',
      });
      res.end('Authentication required\n');
      finish(401);
      return;
    }

    let body = await readBody(req);
    const encoding = (req.headers['content-encoding'] ?? '').toString().trim().toLowerCase();
    if (encoding === 'gzip' || encoding === 'x-gzip') {
      try {
        body = gunzipSync(body);
      } catch {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end('Bad gzip body\n');
        finish(400);
        return;
      }
    }

    if (method === 'POST' && parsed.pathname.endsWith('/git-upload-pack')) {
      const text = body.toString('latin1');
      record.fetch = text.includes('command=fetch') || (!text.includes('command=') && text.includes('want '));
      record.lsRefs = text.includes('command=ls-refs');
    }

    const env: Record<string, string> = {
      ...baseEnv,
      REQUEST_METHOD: method,
      PATH_INFO: decodeURIComponent(parsed.pathname),
      QUERY_STRING: record.query,
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
    };
    if (req.headers['content-type']) env.CONTENT_TYPE = String(req.headers['content-type']);
    if (method === 'POST' || body.length > 0) env.CONTENT_LENGTH = String(body.length);
    const gitProtocol = req.headers['git-protocol'];
    if (gitProtocol) env.HTTP_GIT_PROTOCOL = String(gitProtocol);
    if (opts.auth) {
      env.REMOTE_USER = opts.auth.username;
      env.AUTH_TYPE = 'Basic';
    }

    const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    const stderr: Buffer[] = [];
    child.stderr.on('data', (d: Buffer) => stderr.push(d));
    child.stdin.on('error', () => {
      /* http-backend may exit before reading everything (e.g. a 404) */
    });
    child.stdin.end(body);

    let headerBuf: Buffer = Buffer.alloc(0);
    let headersSent = false;
    let status = 200;

    res.on('close', () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });

    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        res.write(chunk);
        return;
      }
      headerBuf = Buffer.concat([headerBuf, chunk]);
      const end = findHeaderEnd(headerBuf);
      if (!end) return;
      const headerText = headerBuf.subarray(0, end.at).toString('latin1');
      const rest = headerBuf.subarray(end.at + end.sepLen);
      const headers: Record<string, string | string[]> = {};
      for (const line of headerText.split(/\r?\n/)) {
        const idx = line.indexOf(':');
        if (idx <= 0) continue;
        const name = line.slice(0, idx).trim();
        const value = line.slice(idx + 1).trim();
        if (name.toLowerCase() === 'status') {
          const code = Number.parseInt(value, 10);
          if (Number.isFinite(code)) status = code;
          continue;
        }
        const prev = headers[name];
        if (prev === undefined) headers[name] = value;
        else headers[name] = Array.isArray(prev) ? [...prev, value] : [prev, value];
      }
      headersSent = true;
      res.writeHead(status, headers);
      if (rest.length > 0) res.write(rest);
    });

    await new Promise<void>((resolve) => {
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        children.delete(child);
        if (!headersSent) {
          status = 500;
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(`git http-backend produced no CGI headers\n${Buffer.concat(stderr).toString('utf8')}`);
        } else {
          res.end();
        }
        finish(status);
        resolve();
      };
      child.on('error', (err) => {
        stderr.push(Buffer.from(`spawn failed: ${err.message}\n`));
        settle();
      });
      child.on('close', settle);
    });
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(`internal error: ${err instanceof Error ? err.message : String(err)}\n`);
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    urlFor(repo: string): string {
      const clean = repo
        .replace(/^\/+/, '')
        .split('/')
        .map((seg) => encodeURIComponent(seg))
        .join('/');
      return `${url}/${clean}`;
    },
    requests,
    async close(): Promise<void> {
      for (const child of children) child.kill('SIGKILL');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rm(home, { recursive: true, force: true });
    },
  };
}
