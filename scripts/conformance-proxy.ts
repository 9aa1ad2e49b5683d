/**
 * For scripts/conformance-run.sh with a token: a loopback proxy that adds `Authorization: Bearer <token>` to
 * every request (the conformance suite sends no credentials) and forwards it, Host and all, to the server.
 *
 *   SKILLPIN_CONFORMANCE_TOKEN=… npx tsx scripts/conformance-proxy.ts <listen-port> <server-url>
 *
 * Prints `listening <url>` on stdout once it listens; runs until killed.
 */
import { startRoundRobinProxy } from '../test/helpers/roundRobinProxy.ts';

const [port, upstream] = process.argv.slice(2);
const token = process.env['SKILLPIN_CONFORMANCE_TOKEN'];
if (port === undefined || upstream === undefined || token === undefined || token === '') {
  process.stderr.write(
    'usage: SKILLPIN_CONFORMANCE_TOKEN=… conformance-proxy.ts <listen-port> <server-url>\n',
  );
  process.exit(2);
}
const proxy = await startRoundRobinProxy([upstream], {
  port: Number(port),
  setHeaders: { authorization: `Bearer ${token}` },
});
process.stdout.write(`listening ${proxy.url}\n`);
