import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { git } from '../helpers/git.ts';
import { makeRepo } from '../helpers/repo.ts';
import { startHttp, writeConfig } from '../helpers/server.ts';
import { until } from '../helpers/until.ts';

const skillMd = (text: string) => `---\nname: alpha\ndescription: ${text}\n---\n${text}\n`;

describe('skillpin sync beside a running server', () => {
  it('asks the server that holds the lease to sync, and reports what it published', async () => {
    const repo = makeRepo({ 'alpha/SKILL.md': skillMd('one') });
    const file = writeConfig({ sources: [{ id: 'skills', path: repo.dir, ref: 'main', poll: '1h' }] });
    const dataDir = path.join(path.dirname(file), 'data');
    const read = (name: string) => JSON.parse(readFileSync(path.join(dataDir, name), 'utf8'));
    const server = await startHttp(file, [], {}, 120_000);
    try {
      await until('the server to publish the first commit', () => {
        try {
          return read('state.json').sources.skills.current === repo.commit;
        } catch {
          return false;
        }
      });
      writeFileSync(path.join(repo.dir, 'alpha', 'SKILL.md'), skillMd('two'));
      git(['-C', repo.dir, 'commit', '--quiet', '-am', 'two']);
      const two = git(['-C', repo.dir, 'rev-parse', 'HEAD']);
      // The server polls hourly: only the ask makes it sync now.
      expect(await cli('sync', '--config', file)).toEqual({
        status: 0,
        stdout: '',
        stderr: `skills: now at ${two}\n`,
      });
      expect(read('leases/skills.json').pid).toBe(server.child.pid);
      expect(read('state.json').sources.skills.current).toBe(two);
    } finally {
      await server.stop();
    }
  });
});
