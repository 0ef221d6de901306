// Runbook search (shared/knowledge/search.ts): the runbooks under shared/knowledge/runbooks/ are
// well formed, BM25 search over their sections finds the right runbook first, results are bounded,
// excerpts show a query term, and the index is built once per process. Also checks the Lambda
// layout: a bundle finds the runbooks in `knowledge/` beside it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, promises, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { METRIC_KEYS } from '../../shared/fleet/records.js';
import { listRunbooks, RUNBOOK_DIR_CANDIDATES, searchKnowledge } from '../../shared/knowledge/search.js';

// Count the module's reads of the runbooks: it reads through fs.promises (the test itself through node:fs's
// synchronous calls); only reads under the runbook folders count, whatever else in the process reads files.
const readFileSpy = vi.spyOn(promises, 'readFile');
const readdirSpy = vi.spyOn(promises, 'readdir');
const underRunbooks = (calls: unknown[][]) => calls.filter(([path]) => RUNBOOK_DIR_CANDIDATES.some((dir) => String(path).startsWith(dir))).length;
const readFile = { count: () => underRunbooks(readFileSpy.mock.calls) };
const readdir = { count: () => underRunbooks(readdirSpy.mock.calls) };

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNBOOKS = join(REPO, 'shared', 'knowledge', 'runbooks');
const EXPECTED_FILES = ['compaction-backlog.md', 'disk-full.md', 'jvm-heap-pressure.md', 'query-error-spike.md', 'slow-queries.md', 'upgrades.md'];
const SECTIONS = ['Symptoms', 'Confirm', 'Causes', 'Mitigate', 'Escalate', 'Prevent'];

const QUERIES: [query: string, file: string][] = [
  ['disk usage above 90%', 'disk-full.md'],
  ['tablet compaction score rising', 'compaction-backlog.md'],
  ['OutOfMemory frontend heap GC', 'jvm-heap-pressure.md'],
  ['p99 latency slow queries', 'slow-queries.md'],
  ['rolling upgrade to 3.3', 'upgrades.md'],
  ['query error rate spike', 'query-error-spike.md'],
  ['loads fail with too many versions', 'compaction-backlog.md'],
  ['drop expired partitions to free space', 'disk-full.md'],
  ['peak_jvm_heap_gb', 'jvm-heap-pressure.md'],
  ['how to roll back a failed upgrade', 'upgrades.md'],
];

/** Lowercased query words of two or more characters, split the way the index splits text. */
function words(query: string): string[] {
  return query
    .toLowerCase()
    .split(/[\n\r\p{Z}\p{P}]+/u)
    .filter((w) => w.length >= 2);
}

// First in the file, so the first search here is the one that builds the index.
describe('the index is built once per process', () => {
  // Counted in file reads, not timed: the cached search's latency is measured by `npm run bench -- llm`.
  it('concurrent first calls share one build; later calls read no files', async () => {
    expect(readFile.count()).toBe(0);
    const [a, b, list] = await Promise.all([searchKnowledge('disk full'), searchKnowledge('heap'), listRunbooks()]);
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    expect(readFile.count()).toBe(list.length);
    expect(readdir.count()).toBe(1); // the first candidate (the source tree) has them

    const again = await searchKnowledge('disk full');
    await listRunbooks();
    expect(again).toEqual(a);
    expect(readFile.count()).toBe(list.length);
    expect(readdir.count()).toBe(1);
  });
});

describe('the runbooks', () => {
  const files = readdirSync(RUNBOOKS)
    .filter((f) => f.endsWith('.md'))
    .sort();

  it('ships the starter set', () => {
    expect(files).toEqual(EXPECTED_FILES);
  });

  it.each(EXPECTED_FILES)('%s: # Title, a summary paragraph, then the six sections in order, 60-150 lines', (file) => {
    const text = readFileSync(join(RUNBOOKS, file), 'utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^# \S.*$/);
    expect(lines.length).toBeGreaterThanOrEqual(60);
    expect(lines.length).toBeLessThanOrEqual(150);
    const firstSection = lines.findIndex((l) => l.startsWith('## '));
    const summary = lines.slice(1, firstSection).join(' ').trim();
    expect(summary.length).toBeGreaterThan(200);
    const headings = lines.filter((l) => /^##\s/.test(l)).map((l) => l.slice(3).trim());
    expect(headings).toEqual(SECTIONS);
    expect(lines.filter((l) => /^#\s/.test(l))).toHaveLength(1);
    // Every section has a body, and the runbook talks in our metric keys.
    for (let i = 0; i < SECTIONS.length; i++) {
      const start = text.indexOf(`\n## ${SECTIONS[i]}\n`);
      const end = i + 1 < SECTIONS.length ? text.indexOf(`\n## ${SECTIONS[i + 1]}\n`) : text.length;
      expect(text.slice(start, end).split('\n').slice(2).join('').trim().length, SECTIONS[i]).toBeGreaterThan(100);
    }
    expect(METRIC_KEYS.some((key) => text.includes(`\`${key}\``))).toBe(true);
  });

  it('listRunbooks: every file with the title of its # line, by file name', async () => {
    const list = await listRunbooks();
    expect(list.map((r) => r.file)).toEqual(EXPECTED_FILES);
    for (const r of list) {
      const firstLine = readFileSync(join(RUNBOOKS, r.file), 'utf8').split('\n')[0]!;
      expect(r.title).toBe(firstLine.slice(2).trim());
    }
  });

  it('are read from beside the source when running from the repository; knowledge/ beside the bundle is the other candidate', () => {
    expect(RUNBOOK_DIR_CANDIDATES).toEqual([RUNBOOKS, join(REPO, 'shared', 'knowledge', 'knowledge')]);
  });
});

describe('searchKnowledge', () => {
  it.each(QUERIES)('%j → %s first', async (query, file) => {
    const hits = await searchKnowledge(query);
    expect(hits[0]?.file).toBe(file);
  });

  it('a hit names the runbook, file and section, with a positive score; best first', async () => {
    const hits = await searchKnowledge('disk usage above 90%');
    const titles = new Map((await listRunbooks()).map((r) => [r.file, r.title]));
    expect(hits.length).toBeGreaterThan(1);
    for (const h of hits) {
      expect(h.title).toBe(titles.get(h.file));
      expect(['Summary', ...SECTIONS]).toContain(h.section);
      expect(h.score).toBeGreaterThan(0);
    }
    const scores = hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
  });

  it('points at the relevant section', async () => {
    expect((await searchKnowledge('rollback downgrade reverse order'))[0]).toMatchObject({ file: 'upgrades.md', section: 'Mitigate' });
    expect((await searchKnowledge('when to escalate compaction'))[0]).toMatchObject({ file: 'compaction-backlog.md', section: 'Escalate' });
  });

  it.each(QUERIES)('excerpts of %j contain a query term, collapsed, about 300 characters', async (query) => {
    const hits = await searchKnowledge(query, 10);
    expect(hits.length).toBeGreaterThan(0);
    const terms = words(query);
    for (const h of hits) {
      expect(
        terms.some((t) => h.excerpt.toLowerCase().includes(t)),
        `${h.file} ${h.section}: ${h.excerpt}`,
      ).toBe(true);
      expect(h.excerpt).not.toMatch(/\s{2}|\n/);
      expect(h.excerpt.length).toBeGreaterThan(50);
      expect(h.excerpt.length).toBeLessThanOrEqual(302);
    }
  });

  it('the excerpt is the part of the section around the matched terms', async () => {
    const [hit] = await searchKnowledge('flood-stage limit raising risks', 1);
    expect(hit).toMatchObject({ file: 'disk-full.md', section: 'Mitigate' });
    expect(hit!.excerpt).toContain('flood-stage limit');
    expect(hit!.excerpt.startsWith('…')).toBe(true); // not the start of the section
  });

  it('limit: 5 by default, honoured below 10, never more than 10', async () => {
    const broad = 'customer cluster queries nodes';
    expect(await searchKnowledge(broad)).toHaveLength(5);
    expect(await searchKnowledge(broad, 2)).toHaveLength(2);
    expect(await searchKnowledge(broad, 1)).toHaveLength(1);
    expect(await searchKnowledge(broad, 10)).toHaveLength(10);
    expect(await searchKnowledge(broad, 1000)).toHaveLength(10);
    expect(await searchKnowledge(broad, 0)).toHaveLength(1);
    expect(await searchKnowledge(broad, Number.NaN)).toHaveLength(5);
    const two = await searchKnowledge(broad, 2.9);
    expect(two).toHaveLength(2);
    expect(two).toEqual((await searchKnowledge(broad)).slice(0, 2));
  });

  it('an empty or blank query finds nothing; so does one of only common words', async () => {
    expect(await searchKnowledge('')).toEqual([]);
    expect(await searchKnowledge('   \n\t ')).toEqual([]);
    expect(await searchKnowledge('the and of')).toEqual([]);
  });

  it('only the first 200 characters of the query count', async () => {
    const head = 'disk '.repeat(40); // exactly 200 characters
    const hits = await searchKnowledge(`${head}rolling upgrade frontends leader`, 10);
    expect(hits.length).toBeGreaterThan(0);
    expect(hits).toEqual(await searchKnowledge(head, 10));
    expect(hits[0]?.file).toBe('disk-full.md');
  });

  it('prefix search on the last term, light fuzziness on long terms', async () => {
    expect((await searchKnowledge('compac'))[0]?.file).toBe('compaction-backlog.md'); // prefix
    expect((await searchKnowledge('compac backlog', 10)).some((h) => h.excerpt.toLowerCase().includes('compaction'))).toBe(true);
    expect((await searchKnowledge('upgarde rolling'))[0]?.file).toBe('upgrades.md'); // one edit
    expect(await searchKnowledge('zzqx')).toEqual([]); // short: no fuzziness
  });
});

describe('in a Lambda bundle', () => {
  const out = mkdtempSync(join(tmpdir(), 'knowledge-bundle-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  async function bundle(name: string): Promise<string> {
    const file = join(out, name, 'index.mjs');
    await build({
      stdin: {
        contents: "export { searchKnowledge, listRunbooks } from './search.ts';",
        resolveDir: join(REPO, 'shared', 'knowledge'),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: file,
      logLevel: 'silent',
    });
    return file;
  }

  function run(file: string, code: string): string {
    const script = `import * as k from ${JSON.stringify(`file://${file}`)}; ${code}`;
    return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim();
  }

  it('reads the runbooks from knowledge/ beside index.mjs', async () => {
    const file = await bundle('with-knowledge');
    cpSync(RUNBOOKS, join(out, 'with-knowledge', 'knowledge'), { recursive: true });
    const files = JSON.parse(run(file, 'console.log(JSON.stringify((await k.listRunbooks()).map((r) => r.file)));')) as string[];
    expect(files).toEqual(EXPECTED_FILES);
    expect(run(file, "console.log((await k.searchKnowledge('disk usage above 90%'))[0].file);")).toBe('disk-full.md');
  });

  it('without the copied runbooks, a search fails naming where it looked', async () => {
    const file = await bundle('without-knowledge');
    const message = run(file, "try { await k.searchKnowledge('disk'); console.log('found'); } catch (e) { console.log(e.message); }");
    expect(message).toContain('no runbooks found');
    expect(message).toContain(join(out, 'without-knowledge', 'knowledge'));
  });
});
