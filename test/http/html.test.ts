import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/http/html.ts';
import { relative, renderStatusPage } from '../../src/http/statusPage.ts';
import type { SourceStatus, StatusReport } from '../../src/shared/status.ts';

describe('html', () => {
  it('escapes every interpolated value, keeps nested markup, and drops undefined, null and false', () => {
    const name = '<img src=x onerror="alert(1)">';
    const page = html`<p title="${name}">${name} & ${[html`<b>${"'q'"}</b>`, 1]}${undefined}${null}${false}</p>`;
    expect(page.text).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt; & ' +
        '<b>&#39;q&#39;</b>1</p>',
    );
  });

  it('shows characters that hide or reorder text as their code points', () => {
    expect(escapeHtml('ctl\u0001.md \u202Egpj.exe zero\u200Bwidth \uFEFF')).toBe(
      'ctl\\u{0001}.md \\u{202E}gpj.exe zero\\u{200B}width \\u{FEFF}',
    );
  });
});

describe('relative times', () => {
  const now = Date.parse('2024-05-01T12:00:00.000Z');
  it.each([
    ['2024-05-01T11:59:15.000Z', '45 s ago'],
    ['2024-05-01T12:04:00.000Z', 'in 4 min'],
    ['2024-05-01T09:00:00.000Z', '3 h ago'],
    ['2024-04-21T12:00:00.000Z', '10 d ago'],
  ])('%s is %s', (iso, text) => {
    expect(relative(iso, now)).toBe(text);
  });
});

describe('the status page search box', () => {
  const report: StatusReport = { version: 2, sources: [], failures: [] };
  const context = { mcpUrl: 'http://127.0.0.1:1/mcp', now: 0, metrics: false };

  it('is a GET form to the page itself, empty without a query', () => {
    const page = renderStatusPage(report, context);
    expect(page).toContain(
      '<form class="search" method="get" action="/"><input type="search" name="q" value="" aria-label="Search the listed skills" placeholder="what do you want to do?"> <button type="submit">Search</button></form>\n\n</section>',
    );
  });

  it('echoes the query and shows the results best first, every value escaped', () => {
    const query = '"><script>alert(1)</script>';
    const page = renderStatusPage(report, {
      ...context,
      search: {
        query,
        results: [
          {
            uri: 'skill://a/c/x/SKILL.md',
            name: 'x<b>',
            description: "it's <i>fine</i> & good",
            source: 'a',
          },
          { uri: 'skill://a/c/y/SKILL.md', name: 'y', description: 'second', source: 'a' },
        ],
        total: 3,
      },
    });
    expect(page).not.toContain('<script>');
    expect(page).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(page).toContain(
      '<p>2 of 3 matching skills for <q>&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</q>, best first:</p>\n' +
        '<ol class="results"><li><strong>x&lt;b&gt;</strong> (a): it&#39;s &lt;i&gt;fine&lt;/i&gt; &amp; good<br><code>skill://a/c/x/SKILL.md</code></li>' +
        '<li><strong>y</strong> (a): second<br><code>skill://a/c/y/SKILL.md</code></li></ol>',
    );
  });

  it('says so when nothing matches', () => {
    const page = renderStatusPage(report, {
      ...context,
      search: { query: 'nothing', results: [], total: 0 },
    });
    expect(page).toContain('<p>No listed skill matches <q>nothing</q>.</p>');
  });
});

describe('the status page sources', () => {
  const now = Date.parse('2024-05-01T12:00:00.000Z');
  const commit = 'ab'.repeat(20);
  const source = (id: string, fields: Partial<SourceStatus>): SourceStatus => ({
    id,
    repository: `local:/r/${id}`,
    ref: 'main',
    current: null,
    retained: [],
    syncing: false,
    lastSync: null,
    lastSuccess: null,
    nextSync: null,
    lastError: null,
    ...fields,
  });
  const failed = {
    reason: 'source-not-a-repository' as const,
    detail: '/r/down does not exist',
    at: '2024-05-01T11:59:15.000Z',
  };
  const report: StatusReport = {
    version: 2,
    sources: [
      source('ok', { current: { commit, commitTime: '2024-05-01T09:00:00.000Z', skills: 2, problems: [] } }),
      source('down', { lastError: failed }),
    ],
    failures: [],
  };
  const page = (names = new Map([['ok', ['alpha', 'beta']]])) =>
    renderStatusPage(report, { mcpUrl: 'http://127.0.0.1:1/mcp', now, metrics: false, skillNames: names });
  const sectionOf = (text: string, id: string) =>
    text.slice(text.indexOf(`<section class="source" id="source-${id}">`)).split('</section>')[0]!;

  it("shows a commit's search index: build time, terms, its postings' KiB (rounded up), skills cut short", () => {
    const search = { buildMs: 12.5, stored: false, skills: 2, terms: 947, bytes: 2049, unread: 0, cut: 0 };
    const page = (stats: typeof search) =>
      sectionOf(
        renderStatusPage(
          {
            ...report,
            sources: [source('ok', { current: { commit, skills: 2, problems: [], search: stats } })],
          },
          { mcpUrl: 'http://127.0.0.1:1/mcp', now, metrics: false },
        ),
        'ok',
      );
    const line = ' · 2 skills · search index built in 12.5 ms, 947 terms, 3 KiB of postings';
    expect(page(search)).toContain(`${line}</`);
    expect(page({ ...search, cut: 1 })).toContain(`${line}, 1 skill indexed by their first terms only</`);
  });

  it('lists the failing sources first, then the others in configuration order', () => {
    expect([...page().matchAll(/<section class="source" id="source-([a-z]+)">/g)].map((m) => m[1])).toEqual([
      'down',
      'ok',
    ]);
  });

  it('shows a source without a commit with neither skills nor "Problems in the current commit"', () => {
    const down = sectionOf(page(), 'down');
    expect([down.includes('Problems in the current commit'), down.includes('<h3>Skills</h3>')]).toEqual([
      false,
      false,
    ]);
    expect(down).toContain(
      '<p class="error">Last sync failed <time datetime="2024-05-01T11:59:15.000Z">2024-05-01T11:59:15.000Z</time> (45 s ago): <span class="reason">source-not-a-repository</span>: /r/down does not exist</p>',
    );
  });

  it('names each commit once, short, with the full id in its title, and its time absolute and relative', () => {
    const ok = sectionOf(page(), 'ok');
    expect(ok.split(commit).length - 1).toBe(1);
    expect(ok).toContain(
      `<dt>current commit</dt><dd><code class="sha" title="${commit}">${commit.slice(0, 12)}</code> · committed <time datetime="2024-05-01T09:00:00.000Z">2024-05-01T09:00:00.000Z</time> (3 h ago) · 2 skills</dd>`,
    );
  });

  it('names the served skills under each source, folded past 30', () => {
    expect(sectionOf(page(), 'ok')).toContain(
      '<h3>Skills</h3>\n<p class="names"><code>alpha</code>, <code>beta</code></p>',
    );
    const many = Array.from({ length: 31 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    expect(sectionOf(page(new Map([['ok', many]])), 'ok')).toContain(
      `<h3>Skills</h3>\n<details><summary>31 skills</summary><p class="names">${many.map((n) => `<code>${n}</code>`).join(', ')}</p></details>`,
    );
  });
});
