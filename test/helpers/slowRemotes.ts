import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface SlowRemote {
  /** A repository URL on this remote. */
  url: string;
  close(): Promise<void>;
}

/** A remote that accepts connections and never sends a byte. */
export async function silentRemote(): Promise<SlowRemote> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/skills.git`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A remote that answers every request with a 200 whose body comes one byte every `everyMs` and never ends. */
export async function drippingRemote(everyMs = 500): Promise<SlowRemote> {
  const open = new Set<{ res: ServerResponse; timer: NodeJS.Timeout }>();
  const server = createHttpServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
    const drip = { res, timer: setInterval(() => res.write('0'), everyMs) };
    open.add(drip);
    res.on('close', () => {
      clearInterval(drip.timer);
      open.delete(drip);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/skills.git`,
    async close() {
      for (const { res, timer } of open) {
        clearInterval(timer);
        res.destroy();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A remote whose ref listing (`info/refs`) never ends: the same 1 MiB of valid ref lines again and again. */
export async function endlessRefsRemote(): Promise<SlowRemote & { sent(): number }> {
  let sent = 0;
  const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
  const oid = 'a'.repeat(40);
  const head = `${pkt('# service=git-upload-pack\n')}0000${pkt(`${oid} HEAD\0side-band-64k ofs-delta\n`)}`;
  const lines: string[] = [];
  for (let n = 0, bytes = 0; bytes < 1024 * 1024; n++) {
    lines.push(pkt(`${oid} refs/heads/branch-${n}\n`));
    bytes += lines.at(-1)!.length;
  }
  const refs = Buffer.from(lines.join(''));
  const server = createHttpServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
    res.write(head);
    const pump = () => {
      while (!res.destroyed) {
        sent += refs.length;
        if (!res.write(refs)) return void res.once('drain', pump);
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/skills.git`,
    sent: () => sent,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
