// Run as a process of its own (node --import tsx): opens a cli store at argv[2] and lists the refs of the remote at
// argv[3], which never answers; prints "listing" once git runs. A test kills it with -9 and looks at what it left.
import { openStore, resolveRemoteRef } from '../../src/git/index.ts';

const [gitdir, url] = process.argv.slice(2) as [string, string];
const repo = await openStore(gitdir, { backend: 'cli' });
void resolveRemoteRef(repo, { url, timeoutMs: 600_000 }, 'main').catch(() => undefined);
process.stdout.write('listing\n');
