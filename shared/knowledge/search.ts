// Full-text search over the operator runbooks (shared/knowledge/runbooks/*.md).
//
// Each runbook is `# Title`, a summary paragraph, then `## ` sections (Symptoms, Confirm, Causes,
// Mitigate, Escalate, Prevent). Every section (and the summary) is one search document, so a hit
// points at the part of the runbook that answers the query. Ranking is minisearch's BM25 with its
// default parameters; the index is built once per process, on first use.
//
// Where the runbooks are read from (RUNBOOK_DIR_CANDIDATES, first one holding a `.md` file wins),
// the same way shared/rules/defaults.ts finds the rule sets:
//   - `<this directory>/runbooks`: running from the repository (tsx, vitest), i.e.
//     shared/knowledge/runbooks/.
//   - `<bundle directory>/knowledge`: in Lambda, where this module is bundled into
//     `<outdir>/<function>/index.mjs` or a chunk beside it (chat loads it on the first search). The build must copy shared/knowledge/runbooks/*.md into
//     `<outdir>/<function>/knowledge/` (flat, file names unchanged) for every function whose
//     bundle includes this module; without it the first search fails, naming both directories.
// fs.promises, not node:fs/promises: Node loads it when first read, so the cold start does not (≈ 5% of it).
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import MiniSearch, { type SearchResult } from 'minisearch';

export interface KnowledgeHit {
  /** The runbook's `# Title`. */
  title: string;
  /** The runbook's file name, e.g. `disk-full.md`. */
  file: string;
  /** BM25 score (higher is better), rounded to 3 decimals. */
  score: number;
  /** The `## ` heading of the matching section, or `Summary` for the paragraph under the title. */
  section: string;
  /** About 300 characters of the section around the matched terms, whitespace collapsed. */
  excerpt: string;
}

const here = dirname(fileURLToPath(import.meta.url));

/** Where the runbooks are read from: beside the source (running from the repository) or `knowledge/` beside the Lambda bundle. */
export const RUNBOOK_DIR_CANDIDATES: string[] = [join(here, 'runbooks'), join(here, 'knowledge')];

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 10;
const MAX_QUERY_CHARS = 200;
const EXCERPT_CHARS = 300;
/** Characters of context kept before the term an excerpt is anchored on. */
const EXCERPT_LEAD = 60;
/** Fuzzy matching (edit distance = 20% of the term length) only for terms at least this long. */
const FUZZY_MIN_CHARS = 5;
const FUZZINESS = 0.2;
/** Prefix matching of the last query term only once it has this many characters ("3" would match every number). */
const PREFIX_MIN_CHARS = 2;
const SUMMARY_SECTION = 'Summary';

/** Common English words that carry no meaning for the search (dropped from documents and queries). */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can do does for from has have how i if in into is it its ' +
    'no not of on or so than that the their then there these this to was we were what when where ' +
    'which while who why will with you your'
  ).split(' '),
);

interface SectionDoc {
  id: string;
  title: string;
  file: string;
  section: string;
  text: string;
}

interface Runbook {
  title: string;
  file: string;
  sections: { heading: string; body: string }[];
}

interface Corpus {
  runbooks: { title: string; file: string }[];
  index: MiniSearch<SectionDoc>;
}

function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  return t === '' || STOP_WORDS.has(t) ? null : t;
}

/** `# Title`, the paragraph under it (as `Summary`), then one section per `## ` heading; fence lines dropped. */
function parseRunbook(file: string, markdown: string): Runbook {
  let title: string | undefined;
  const sections: { heading: string; body: string[] }[] = [{ heading: SUMMARY_SECTION, body: [] }];
  let inFence = false;
  for (const line of markdown.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (!inFence) {
      const h1 = /^#\s+(.+?)\s*#*\s*$/.exec(line);
      if (h1 && title === undefined) {
        title = h1[1];
        continue;
      }
      const h2 = /^##\s+(.+?)\s*#*\s*$/.exec(line);
      if (h2) {
        sections.push({ heading: h2[1]!, body: [] });
        continue;
      }
    }
    sections[sections.length - 1]!.body.push(line);
  }
  return {
    title: title ?? file.replace(/\.md$/i, ''),
    file,
    sections: sections.map((s) => ({ heading: s.heading, body: s.body.join('\n').trim() })).filter((s) => s.body !== ''),
  };
}

async function markdownFiles(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((name) => name.toLowerCase().endsWith('.md')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}

async function buildCorpus(): Promise<Corpus> {
  let dir: string | undefined;
  let files: string[] = [];
  for (const candidate of RUNBOOK_DIR_CANDIDATES) {
    files = await markdownFiles(candidate);
    if (files.length > 0) {
      dir = candidate;
      break;
    }
  }
  if (dir === undefined) throw new Error(`no runbooks found (looked for *.md in ${RUNBOOK_DIR_CANDIDATES.join(', ')})`);
  const from = dir;
  const runbooks = await Promise.all(files.map(async (file) => parseRunbook(file, await fs.readFile(join(from, file), 'utf8'))));

  const index = new MiniSearch<SectionDoc>({
    fields: ['title', 'section', 'text'],
    storeFields: ['title', 'file', 'section', 'text'],
    processTerm,
    searchOptions: {
      boost: { title: 3, section: 2 },
      prefix: (term, i, terms) => i === terms.length - 1 && term.length >= PREFIX_MIN_CHARS,
      fuzzy: (term) => (term.length >= FUZZY_MIN_CHARS ? FUZZINESS : false),
    },
  });
  index.addAll(runbooks.flatMap((r) => r.sections.map((s, i) => ({ id: `${r.file}#${i}`, title: r.title, file: r.file, section: s.heading, text: s.body }))));
  return { runbooks: runbooks.map((r) => ({ title: r.title, file: r.file })), index };
}

let corpus: Promise<Corpus> | undefined;

/** The index, built on first use and shared by every later call (a failed build is retried next time). */
function loadCorpus(): Promise<Corpus> {
  corpus ??= buildCorpus().catch((err: unknown) => {
    corpus = undefined;
    throw err;
  });
  return corpus;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * About EXCERPT_CHARS characters of `text` (whitespace collapsed): the window, starting a little
 * before an occurrence of a matched term, that holds the most distinct matched terms (the earliest
 * on a tie), cut at word boundaries; the section's start when no term occurs in its text.
 */
function excerptOf(rawText: string, terms: readonly string[]): string {
  const text = rawText.replace(/\s+/g, ' ').trim();
  if (text.length <= EXCERPT_CHARS) return text;

  const hits: { at: number; end: number; term: string }[] = [];
  for (const term of new Set(terms)) {
    const re = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(term)}(?![\\p{L}\\p{N}])`, 'giu');
    for (const m of text.matchAll(re)) hits.push({ at: m.index, end: m.index + m[0].length, term });
  }
  hits.sort((a, b) => a.at - b.at);

  let start = 0;
  let best = -1;
  for (const hit of hits.slice(0, 500)) {
    const from = Math.max(0, hit.at - EXCERPT_LEAD);
    const to = from + EXCERPT_CHARS;
    const distinct = new Set(hits.filter((h) => h.at >= from && h.end <= to).map((h) => h.term)).size;
    if (distinct > best) {
      best = distinct;
      start = from;
    }
  }
  let end = Math.min(text.length, start + EXCERPT_CHARS);
  if (end === text.length) start = Math.max(0, end - EXCERPT_CHARS);

  // Whole words only: skip a cut word at the start and drop one at the end.
  if (start > 0 && text[start - 1] !== ' ') {
    const space = text.indexOf(' ', start);
    if (space !== -1 && space - start < 30) start = space + 1;
  }
  if (end < text.length && text[end] !== ' ') {
    const space = text.lastIndexOf(' ', end);
    if (space > start && end - space < 30) end = space;
  }
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

/** Document terms that matched in the section body (falling back to every matched term). */
function textTerms(result: SearchResult): string[] {
  const inText = Object.entries(result.match)
    .filter(([, fields]) => fields.includes('text'))
    .map(([term]) => term);
  return inText.length > 0 ? inText : result.terms;
}

function clampLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
}

/** BM25 full-text search (minisearch) over the runbooks, split into sections so a hit points at the relevant part. */
export async function searchKnowledge(query: string, limit?: number): Promise<KnowledgeHit[]> {
  const q = (typeof query === 'string' ? query : '').trim().slice(0, MAX_QUERY_CHARS);
  if (q === '') return [];
  const { index } = await loadCorpus();
  return index
    .search(q)
    .slice(0, clampLimit(limit))
    .map((r) => ({
      title: r.title as string,
      file: r.file as string,
      score: Math.round(r.score * 1000) / 1000,
      section: r.section as string,
      excerpt: excerptOf(r.text as string, textTerms(r)),
    }));
}

/** Every runbook's title and file name, by file name. */
export async function listRunbooks(): Promise<{ title: string; file: string }[]> {
  const { runbooks } = await loadCorpus();
  return runbooks.map((r) => ({ ...r }));
}
