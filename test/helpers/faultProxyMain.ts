// A fault proxy (faultProxy.ts) in a process of its own: argv is the target URL and the fault as JSON. It prints its
// URL on stdout and closes when its stdin ends (faultProxyProcess.ts starts it).
import { startFaultProxy } from './faultProxy.ts';

const [target, fault] = process.argv.slice(2);
const proxy = await startFaultProxy(target!);
proxy.setFault(JSON.parse(fault!));
process.stdout.write(`${proxy.url}\n`);
process.stdin
  .on('end', () => {
    void proxy.close().then(() => process.exit(0));
  })
  .resume();
