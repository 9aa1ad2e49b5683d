/**
 * What the HTTP benchmarks share: a server in a child process found by the URL it reports, 2026-07-28 requests
 * over a kept-alive agent, a listing walked page by page, a seeded generator, and a process's CPU and RSS.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { type Agent, get, request } from 'node:http';

export const PROTOCOL = '2026-07-28';
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** User + system CPU time of a process in milliseconds, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Resident set size of a process in MiB, from /proc/<pid>/status. */
export function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/**
 * Starts `node <args>` in `cwd` and resolves with the URL it reports (skillpin in its log line, the SDK's server
 * on stdout); rejects if it exits first or says nothing within `timeoutMs`.
 */
export function startChild(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no URL reported in ${timeoutMs / 1000} s:\n${output}`));
    }, timeoutMs);
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', look);
      child.stderr!.off('data', look);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve({ url: match[1]!, child });
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
  });
}

/** Where requests go: a server (or a proxy) over one kept-alive agent. */
export interface McpTarget {
  name: string;
  url: string;
  agent: Agent;
  /** Sent as the Authorization header. */
  authorization?: string;
  /** Response bytes received so far (counted when present). */
  received?: number;
}

let nextId = 0;

/** One JSON-RPC request as a 2026-07-28 client sends it; resolves with the result or throws the error. */
export function call(
  target: McpTarget,
  method: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL,
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const headers: Record<string, string | number> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'mcp-method': method,
    'mcp-protocol-version': PROTOCOL,
    ...(target.authorization === undefined ? {} : { authorization: target.authorization }),
  };
  if (typeof params['uri'] === 'string') headers['mcp-name'] = params['uri'];
  else if (typeof params['name'] === 'string') headers['mcp-name'] = params['name'];
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: 'POST', agent: target.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        if (target.received !== undefined) target.received += bytes.byteLength;
        const text = bytes.toString('utf8');
        try {
          const message = JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
          if (message.result !== undefined) return resolve(message.result);
          reject(new Error(`${target.name} ${method}: ${JSON.stringify(message.error)}`));
        } catch {
          reject(new Error(`${target.name} ${method}: HTTP ${res.statusCode} ${text.slice(0, 200)}`));
        }
      });
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** Every skill and every file URI a server lists, walking skills/list page by page. */
export async function inventory(target: McpTarget): Promise<{ skills: number; files: string[] }> {
  let cursor: string | undefined;
  let skills = 0;
  const files: string[] = [];
  do {
    const page = await call(target, 'skills/list', cursor === undefined ? {} : { cursor });
    for (const skill of page['skills'] as Array<{ resources: Array<{ uri: string }> }>) {
      skills++;
      for (const resource of skill.resources) files.push(resource.uri);
    }
    cursor = page['nextCursor'] as string | undefined;
  } while (cursor !== undefined);
  return { skills, files };
}

/** A small seeded generator (mulberry32), so every server is asked for the same sequence of files. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** GET `url`: its status code (`/readyz`, `/healthz`). */
export const httpStatus = (url: string) =>
  new Promise<number>((resolve, reject) =>
    get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).once('error', reject),
  );
