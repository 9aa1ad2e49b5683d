import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/shared/status.ts';
import { fixture } from '../helpers/fixtures.ts';
import { writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';

/** Debian's package (`apt-get install chromium`; .ci/run installs it); CHROMIUM names another binary. */
const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const adversarial = fixture('adversarial');

describe('the status page in a real browser', () => {
  let server: InProcessServer;
  let browser: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const requested: string[] = [];
  let headers: Record<string, string>;
  let base: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM)`);
    const config = writeConfig({
      sync: { retryMin: '1h', retryMax: '1h' },
      sources: [
        { id: 'catalog', path: catalog.gitdir, ref: 'main', paths: ['skills'] },
        { id: 'adv', path: adversarial.gitdir, ref: 'main' },
        { id: 'broken', path: path.join(tempDir(), 'nope'), commit: c2 },
      ],
    });
    server = await serveInProcess(config);
    base = new URL(server.url).origin;
    browser = await chromium.launchPersistentContext(tempDir('skillpin-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('request', (request) => void requested.push(request.url()));
    const response = (await page.goto(`${base}/`))!;
    headers = response.headers();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const text = (selector: string) => page.locator(selector).textContent();

  it('renders the report /status gives, from the page alone', async () => {
    expect(await page.title()).toBe('skillpin status');
    expect(requested).toEqual([`${base}/`]);
    expect(headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    const report = (await (await fetch(`${base}/status`)).json()) as StatusReport;
    const shown = await page.locator('section.source').evaluateAll((sections) =>
      sections.map((section) => ({
        id: section.id,
        current: section.querySelector('dd code.sha')?.getAttribute('title') ?? null,
      })),
    );
    // The failing source first, then the others in configuration order.
    expect(shown).toEqual(
      ['broken', 'catalog', 'adv'].map((id) => ({
        id: `source-${id}`,
        current: report.sources.find((source) => source.id === id)!.current?.commit ?? null,
      })),
    );
    expect(await text('#source-catalog dd code.sha')).toBe(report.sources[0]!.current!.commit.slice(0, 12));
    expect(await text('#source-catalog p.names')).toBe(
      'changelog-writer, data-pipeline, git-commit-style, pdf-forms, release-notes, validate-rows, vercel-composition-patterns',
    );
    expect(await text('#source-catalog .state')).toBe('serving');
    expect(await text('#source-catalog dd >> nth=1')).toBe('main');
    expect(await text('#connect pre')).toBe(`claude mcp add --transport http skillpin ${base}/mcp`);
  });

  it("shows a failing source's reason and detail", async () => {
    expect(await text('#source-broken .state')).toBe('failing: source-not-a-repository');
    expect(await text('#source-broken .error')).toMatch(
      /^Last sync failed \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ s ago\): source-not-a-repository: \/\S+\/nope does not exist \(looked for \/\S+\/nope\)$/,
    );
    expect(await text('#source-broken dd >> nth=1')).toBe('a pinned commit');
    expect(await page.locator('#source-broken h3').count()).toBe(0);
  });

  it('shows hostile names and paths as text: no markup of theirs runs or renders', async () => {
    const hostile = page.locator('#source-adv li', { hasText: 'onerror' });
    expect(await hostile.locator('code').textContent()).toBe('skills/<img src=x onerror=alert(1)>/SKILL.md');
    expect(await hostile.textContent()).toContain('name "<script>alert(2)</script>" must be 1-64 characters');
    expect(await page.locator('img, script').count()).toBe(0);
    expect(dialogs).toEqual([]);
    // A control character in a path (a warning, in the folded list) is shown, not swallowed.
    expect(await page.locator('#source-adv li code', { hasText: 'ctl' }).textContent()).toBe(
      'skills/bad-file-names/ctl\\u{0001}.md',
    );
  });
});
