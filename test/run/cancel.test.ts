import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { defaultRunSettings } from '../../src/config/index.ts';
import type { FileReader } from '../../src/catalog/index.ts';
import { verifiedReader } from '../../src/mcp/read.ts';
import type { Prepared } from '../../src/run/plan.ts';
import { createRunner } from '../../src/run/runner.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { renderOutcome } from '../../src/mcp/tools/skillRunRender.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { capturingLogger, type LogLine } from '../helpers/logs.ts';
import { groupGone, pidsRunning } from '../helpers/processes.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { c1, GRANTS, harness, SOURCE, scripts, skillUri, stateOf } from './harness.ts';

const BOUNDS = skillUri('skills/bounds');
/** slow.js given 60 runs for a minute (its declared timeout is capped at 300 s): long enough to be cancelled. */
const SLOW = { script: 'scripts/slow.js', args: ['60'] };

/** The run's log lines, as the server wrote them. */
const runLines = (lines: LogLine[]) =>
  lines.filter((line) => line.msg.startsWith('skill_run')).map(({ time, pid, hostname, ...line }) => line);

/** The pid of the one process running `script` of `cwd`, once it has started. */
const scriptPid = (cwd: string, script: string) =>
  until(`${script} to start`, () => pidsRunning(path.join(cwd, script))[0]);

/** A runner over the scripts fixture at c1 whose reads of the skill's files wait for `gate`, when given. */
async function runnerOver(gate?: Promise<void>) {
  const ns = await namespaceOf(SOURCE, scripts.gitdir, c1);
  const { logger, lines } = capturingLogger();
  const verified = verifiedReader(logger);
  const reads: string[] = [];
  const read: FileReader = async (namespace, file) => {
    reads.push(file.uri);
    await gate;
    return verified(namespace, file);
  };
  const runner = createRunner(
    {
      grants: new Map([[SOURCE, GRANTS]]),
      settings: defaultRunSettings(),
      dir: path.join(tempDir('skillpin-cancel-'), 'run'),
      environ: { state: 'scrubbed' },
      // Scripts as the server's own user: test/run/runUser.test.ts covers another.
      identity: { state: 'same' },
    },
    { catalog: createCatalog(stateOf(ns)), read, logger },
  );
  const served = buildSnapshot(ns).ordered.find((s) => s.skill.dir === 'skills/bounds')!;
  const prepare = (script: string, args: string[] = []): Prepared => {
    const prepared = runner.prepare(served, script, args);
    if (!prepared.ok) throw new Error(prepared.refusal.detail);
    return prepared.prepared;
  };
  return { runner, prepare, lines, reads };
}

const where = (prepared: Prepared) => ({
  level: 30,
  source: SOURCE,
  commit: c1,
  skill: 'skills/bounds',
  script: prepared.willRun.script,
});

describe('skill_run cancelled', () => {
  it('ends the script and its group when the signal is aborted: the outcome says cancelled, not timed out', async () => {
    const { runner, prepare, lines } = await runnerOver();
    const prepared = prepare(SLOW.script, SLOW.args);
    const controller = new AbortController();
    const running = runner.run(prepared, runner.issue(prepared, 'stdio').token, 'stdio', controller.signal);
    const pid = await scriptPid(prepared.willRun.cwd, SLOW.script);
    controller.abort();
    const result = await running;
    await until('the script group to be gone', () => groupGone(pid));
    expect(result).toMatchObject({
      ok: true,
      outcome: {
        exitCode: null,
        signal: 'SIGTERM',
        stdout: '',
        stderr: '',
        truncated: false,
        timedOut: false,
        cancelled: true,
        materialised: 'cold',
      },
    });
    if (!result.ok) return;
    expect(result.outcome.durationMs).toBeLessThan(60_000);
    expect(renderOutcome(prepared.willRun, result.outcome).split('\n')[0]).toBe(
      `Ran scripts/slow.js of skills/bounds (source "${SOURCE}", commit ${c1}): ended by SIGTERM in ${result.outcome.durationMs} ms (cancelled by the client)`,
    );
    expect(runLines(lines)).toEqual([
      { ...where(prepared), digest: prepared.willRun.digest, args: 1, msg: 'skill_run: starting' },
      {
        ...where(prepared),
        exitCode: null,
        signal: 'SIGTERM',
        timedOut: false,
        cancelled: true,
        ms: result.outcome.durationMs,
        msg: 'skill_run: cancelled',
      },
    ]);
  });

  it('starts nothing when the signal was aborted before the run; the token stays good', async () => {
    const { runner, prepare, lines, reads } = await runnerOver();
    const prepared = prepare('scripts/argv.js');
    const { token } = runner.issue(prepared, 'stdio');
    const cancelled = await runner.run(prepared, token, 'stdio', AbortSignal.abort());
    expect(cancelled).toEqual({
      ok: false,
      refusal: {
        code: 'run-cancelled',
        detail: 'the request was cancelled before the script started; nothing ran (the token is still good)',
      },
    });
    expect(reads).toEqual([]);
    expect(runLines(lines)).toEqual([
      { ...where(prepared), cancelled: true, msg: 'skill_run: cancelled before the script started' },
    ]);
    const ran = await runner.run(prepared, token, 'stdio');
    expect(ran).toMatchObject({ ok: true, outcome: { exitCode: 0, cancelled: false } });
  });

  it('starts nothing when the signal is aborted while the skill is being materialised', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { runner, prepare, lines, reads } = await runnerOver(gate);
    const prepared = prepare(SLOW.script, SLOW.args);
    const controller = new AbortController();
    const running = runner.run(prepared, runner.issue(prepared, 'stdio').token, 'stdio', controller.signal);
    await until('the skill to be read', () => reads.length > 0);
    controller.abort();
    open();
    expect(await running).toEqual({
      ok: false,
      refusal: {
        code: 'run-cancelled',
        detail: 'the request was cancelled before the script started; nothing ran (the token is spent)',
      },
    });
    expect(pidsRunning(path.join(prepared.willRun.cwd, SLOW.script))).toEqual([]);
    expect(runLines(lines)).toEqual([
      { ...where(prepared), cancelled: true, msg: 'skill_run: cancelled before the script started' },
    ]);
  });

  it('ends the script when a 2025-11-25 client cancels its tools/call (notifications/cancelled)', async () => {
    const { logger, lines } = capturingLogger();
    const h = await harness({ grants: GRANTS, logger });
    const args = { uri: BOUNDS, ...SLOW };
    const preview = await h.run(args);
    const { cwd } = (preview.structuredContent!['preview'] as { willRun: { cwd: string } }).willRun;
    const controller = new AbortController();
    const call = h.client.callTool(
      { name: 'skill_run', arguments: { ...args, confirmToken: preview.structuredContent!['confirmToken'] } },
      { signal: controller.signal },
    );
    const pid = await scriptPid(cwd, SLOW.script);
    controller.abort('the user stopped it');
    await expect(call).rejects.toThrow('the user stopped it');
    await until('the script group to be gone', () => groupGone(pid));
    const ended = await until('the run to be logged as ended', () =>
      lines.find((line) => line.msg === 'skill_run: cancelled'),
    );
    expect(ended).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: false, cancelled: true });
    expect(lines.some((line) => line.msg === 'skill_run: finished')).toBe(false);
    await h.close();
  });
});
