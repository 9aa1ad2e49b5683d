import path from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/server';
import { createCatalog, type Catalog, type CatalogState, type Namespace } from '../../src/catalog/index.ts';
import { defaultRunSettings, type RunGrants, type RunSettings } from '../../src/config/index.ts';
import type { EnvironStatus } from '../../src/run/initialEnviron.ts';
import type { RunIdentity } from '../../src/run/identity.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import type { Logger } from '../../src/shared/log.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';

export const scripts = fixture('scripts');
export const c1 = scripts.commits['c1']!;
export const c2 = scripts.commits['c2']!;
export const SOURCE = 'scripts';

export const skillUri = (skill: string, commit = c1) => `skill://${SOURCE}/${commit}/${skill}/SKILL.md`;

export const stateOf = (...namespaces: Namespace[]): CatalogState => ({
  sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
  failures: [],
});

export type ToolResult = {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
};

export interface HarnessOptions {
  grants?: RunGrants;
  settings?: Partial<RunSettings>;
  env?: NodeJS.ProcessEnv;
  environ?: EnvironStatus;
  now?: () => number;
  /** Declares elicitation and answers each prompt with this. */
  elicit?: (params: ElicitRequestFormParams) => ElicitResult;
  namespaces?: Namespace[];
  logger?: Logger;
  /** Who scripts run as; default the server's own user (the tests that switch users say so). */
  identity?: RunIdentity;
  /** Where files go for scripts of another user. */
  sharedDir?: string;
}

/** A 2025-11-25 client of a server over the scripts fixture at c1, with skill_run configured, in memory. */
export async function harness(options: HarnessOptions = {}) {
  const namespaces = options.namespaces ?? [await namespaceOf(SOURCE, scripts.gitdir, c1)];
  const catalog: Catalog = createCatalog(stateOf(...namespaces));
  const dir = path.join(tempDir('skillpin-run-'), 'run');
  const factory = createServerFactory({
    catalog,
    logger: options.logger ?? silentLogger(),
    cache: cachePolicy({ listTtlMs: 1000, pinnedTtlMs: 1000 }),
    run: {
      grants: new Map(options.grants === undefined ? [] : [[SOURCE, options.grants]]),
      settings: { ...defaultRunSettings(), ...options.settings },
      dir,
      environ: options.environ ?? { state: 'scrubbed' },
      identity: options.identity ?? { state: 'same' },
      sharedDir: options.sharedDir,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.now === undefined ? {} : { now: options.now }),
    },
  });
  const client = new Client(
    { name: 'skillpin-test', version: '1.0.0' },
    options.elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } },
  );
  const prompts: ElicitRequestFormParams[] = [];
  if (options.elicit !== undefined) {
    const answer = options.elicit;
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as ElicitRequestFormParams;
      prompts.push(params);
      return answer(params);
    });
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return {
    client,
    catalog,
    dir,
    prompts,
    call,
    run: (args: Record<string, unknown>) => call('skill_run', args),
    close: () => client.close(),
  };
}

/** The grants most tests use: env-probe's script with both its variables, and every script of bounds. */
export const GRANTS: RunGrants = [
  { skill: 'skills/env-probe', script: 'scripts/env.js', env: ['PROBE_TOKEN', 'PROBE_UNSET'] },
  ...['argv', 'empty', 'flood', 'sleep', 'detach', 'fail', 'slow'].map((name) => ({
    skill: 'skills/bounds',
    script: `scripts/${name}.js`,
    env: [],
  })),
];
