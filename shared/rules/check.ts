// Checking a rule set's YAML text: it must parse within bounded work, have
// only the shapes a rule set needs, be a mapping with the rule set's top-level
// key, and pass the rule set's full schema. Errors say where (line and column,
// or path) and never carry an internal exception's text. Used where rule sets
// are written (and by the build for the shipped defaults); readers use the
// parsed form stored with each version and never parse YAML.
//
// Work is bounded in three linear steps before anything recursive runs
// (see README.md in this folder):
//   1. the raw text: size, lines, bracket depth, how far a line's content starts;
//   2. the CST (yaml's Lexer/Parser, iterative): nesting depth, explicit `?`
//      keys, non-scalar keys, merge keys, tags beyond the core ones,
//      directives, more than one document, alias uses;
//   3. the composed document: aliases refer only to alias-free nodes and their
//      expansion adds at most the size limit again.
// Only then is the document turned into data (toJS) and checked by zod.
import { Composer, isCollection, isScalar, LineCounter, Parser, visit, type CST, type Document } from 'yaml';
import type * as z from '../zod.js';
import type { RuleSetName } from './defaults.js';
import { HealthRulesToWrite, IssueRules, MetricSourcesToWrite, RiskRulesToWrite } from './schemas.js';

/** Top-level key each rule set must have (the issue rules have none). */
export const TOP_KEY: Record<RuleSetName, string | null> = {
  'health-rules': 'scoring',
  'issue-rules': null,
  'risk-rules': 'risk',
  'metric-sources': 'prometheus',
};
export const SCHEMAS: Record<RuleSetName, z.ZodMiniType> = {
  'health-rules': HealthRulesToWrite,
  'issue-rules': IssueRules,
  'risk-rules': RiskRulesToWrite,
  'metric-sources': MetricSourcesToWrite,
};

export type RuleCheck = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Limits far beyond any real rule set (the shipped ones are a few hundred
 * lines and nest 4 deep), so that hostile text costs milliseconds.
 * `indentColumns`: a line's content may start at most this far in, counting
 * leading spaces and block indicators (`- `, `? `, `: `); every block nesting
 * level takes at least one column, so this bounds block nesting before the parser runs.
 * `items`: the parser's work grows with its tokens, not with bytes (a 64 KB
 * scalar costs ~1 ms, 64 KB of `1,1,1,…` ~100 ms), so the tokens are bounded
 * too, counted by a character scan (see itemCount); the shipped health rules
 * (13 dimensions) have about 400, 50 dimensions would have about 1,500.
 */
export const TEXT_LIMITS = { bytes: 64 * 1024, lines: 5_000, items: 4_000, depth: 32, aliases: 50, indentColumns: 128 } as const;

/** Tags of the YAML 1.2 core schema: the only ones a rule set may carry. */
export const CORE_TAGS: ReadonlySet<string> = new Set(['!!str', '!!int', '!!float', '!!bool', '!!null', '!!map', '!!seq']);

type Refusal = { message: string; offset?: number };

/** The offset of the first bracket nested deeper than `limit`, counting every bracket (quotes ignored: refusing too much here is harmless). */
function tooDeepBracket(text: string, limit: number): number | null {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 91 || c === 123) {
      if (++depth > limit) return i; // [ {
    } else if (c === 93 || c === 125) depth = Math.max(0, depth - 1); // ] }
  }
  return null;
}

const SPACE = 32;
const TAB = 9;
const isBlank = (c: number) => c === SPACE || c === TAB;
const isIndicator = (c: number) => c === 45 || c === 63 || c === 58; // - ? :

/** The first line whose content starts more than `indentColumns` in (leading blanks and block indicators), as an offset. */
function deepLine(text: string): number | null {
  let lineStart = 0;
  while (lineStart <= text.length) {
    let i = lineStart;
    for (;;) {
      while (i < text.length && isBlank(text.charCodeAt(i))) i++;
      // An indicator counts only when a blank or the line's end follows it (`-1` and `a:b` are scalars).
      if (i < text.length && isIndicator(text.charCodeAt(i)) && (i + 1 >= text.length || isBlank(text.charCodeAt(i + 1)) || text.charCodeAt(i + 1) === 10)) i++;
      else break;
    }
    if (i - lineStart > TEXT_LIMITS.indentColumns) return lineStart;
    const next = text.indexOf('\n', i);
    if (next < 0) return null;
    lineStart = next + 1;
  }
  return null;
}

/**
 * An upper bound on the parser's tokens, by one character scan: line breaks,
 * commas, opening brackets, anchors, aliases and tags (`&`, `*`, `!`), and the
 * block indicators `-`, `?`, `:` when a blank or line end follows. Characters
 * inside quotes and comments count too: over-counting only refuses absurd text.
 */
function itemCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 44 || c === 91 || c === 123 || c === 38 || c === 42 || c === 33)
      n++; // \n , [ { & * !
    else if (isIndicator(c)) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 10;
      if (next === 10 || isBlank(next)) n++;
    }
  }
  return n;
}

function textLimitsBroken(text: string): Refusal | null {
  if (Buffer.byteLength(text) > TEXT_LIMITS.bytes) return { message: `more than ${TEXT_LIMITS.bytes / 1024} KB` };
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1))
    if (++lines > TEXT_LIMITS.lines) return { message: `more than ${TEXT_LIMITS.lines} lines` };
  const bracket = tooDeepBracket(text, TEXT_LIMITS.depth);
  if (bracket !== null) return { message: `collections nested deeper than ${TEXT_LIMITS.depth} levels`, offset: bracket };
  // YAML's printable set (1.2 §5.1) has no C0 control but tab, line feed and carriage return, nor DEL, nor C1 but NEL; the parser
  // kept one in a comment or a quoted string, where it was stored unseen (a NUL, an escape sequence for a terminal).
  const control = CONTROL.exec(text);
  if (control)
    return { message: `the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed`, offset: control.index };
  const deep = deepLine(text);
  if (deep !== null) {
    return {
      message: `collections nested deeper than ${TEXT_LIMITS.depth} levels (a line's content starts more than ${TEXT_LIMITS.indentColumns} columns in)`,
      offset: deep,
    };
  }
  if (itemCount(text) > TEXT_LIMITS.items)
    return { message: `more than ${TEXT_LIMITS.items} YAML items (lines, entries, indicators, anchors, aliases and tags)` };
  return null;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u0084\u0086-\u009f]/;

const SCALAR_KEY_TYPES = new Set(['scalar', 'single-quoted-scalar', 'double-quoted-scalar']);

/**
 * One iterative pass over the CST (no recursion, whatever the nesting): every
 * shape a rule set never needs is refused here, before the composer (which
 * recurses as deep as the text nests) and toJS (whose work doubles with each
 * level of collection-valued keys) ever see it.
 */
function shapeBroken(tokens: readonly CST.Token[]): Refusal | null {
  let documents = 0;
  let aliases = 0;
  const stack: { token: CST.Token; depth: number }[] = [];
  for (let i = tokens.length - 1; i >= 0; i--) stack.push({ token: tokens[i]!, depth: 0 });

  const checkSource = (list: readonly CST.SourceToken[] | undefined): Refusal | null => {
    for (const t of list ?? []) {
      if (t.type === 'explicit-key-ind') return { message: 'explicit keys (`?`) are not accepted: keys are plain text', offset: t.offset };
      if (t.type === 'tag' && !CORE_TAGS.has(t.source))
        return { message: `the tag \`${t.source.slice(0, 40)}\` is not accepted (only ${[...CORE_TAGS].join(', ')})`, offset: t.offset };
    }
    return null;
  };
  const checkKey = (key: CST.Token | null | undefined, explicit: boolean | undefined, at: number): Refusal | null => {
    if (explicit) return { message: 'explicit keys (`?`) are not accepted: keys are plain text', offset: at };
    if (key === null || key === undefined) return null;
    if (!SCALAR_KEY_TYPES.has(key.type)) {
      return {
        message: key.type === 'alias' ? 'an alias is not accepted as a mapping key' : 'mapping keys must be plain text, not collections',
        offset: key.offset,
      };
    }
    if (key.type === 'scalar' && (key as CST.FlowScalar).source === '<<') return { message: 'merge keys (`<<`) are not accepted', offset: key.offset };
    return null;
  };
  const push = (token: CST.Token | null | undefined, depth: number) => {
    if (token) stack.push({ token, depth });
  };

  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    switch (token.type) {
      case 'directive':
        return { message: 'YAML directives (`%YAML`, `%TAG`) are not accepted', offset: token.offset };
      case 'document': {
        if (++documents > 1) return { message: 'more than one YAML document', offset: token.offset };
        const refused = checkSource(token.start) ?? checkSource(token.end);
        if (refused) return refused;
        push(token.value, depth);
        break;
      }
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        if (depth + 1 > TEXT_LIMITS.depth) return { message: `collections nested deeper than ${TEXT_LIMITS.depth} levels`, offset: token.offset };
        if (token.type === 'flow-collection') {
          // Unclosed, the parser reads every later line into it, nesting deeper line by line: said here, at its
          // bracket, rather than as the nesting limit many lines further down.
          const closer = token.start.source === '[' ? ']' : '}';
          if (!token.end.some((t) => t.type === 'flow-seq-end' || t.type === 'flow-map-end'))
            return { message: `\`${token.start.source}\` is never closed with \`${closer}\``, offset: token.start.offset };
          const refused = checkSource([token.start]) ?? checkSource(token.end);
          if (refused) return refused;
        }
        for (const item of token.items) {
          const refused =
            checkSource(item.start) ??
            checkSource(item.sep) ??
            checkKey(item.key, 'explicitKey' in item ? item.explicitKey : undefined, item.start[0]?.offset ?? token.offset);
          if (refused) return refused;
        }
        // Last pushed, first checked: items in the text's order, so the first fault in the text is the one said.
        for (let i = token.items.length - 1; i >= 0; i--) push(token.items[i]!.value, depth + 1);
        break;
      }
      case 'alias':
        if (++aliases > TEXT_LIMITS.aliases) return { message: `more than ${TEXT_LIMITS.aliases} aliases`, offset: token.offset };
        break;
      case 'block-scalar': {
        const refused = checkSource(token.props as CST.SourceToken[]);
        if (refused) return refused;
        break;
      }
      default: {
        // Scalars and stray source tokens (errors are reported by the composer with their position).
        const refused = checkSource(
          'end' in token && Array.isArray(token.end) ? token.end : 'indent' in token && 'source' in token ? [token as CST.SourceToken] : undefined,
        );
        if (refused) return refused;
      }
    }
  }
  return null;
}

/**
 * Aliases may refer only to nodes without aliases of their own, and together
 * may copy at most TEXT_LIMITS.bytes of source: the data toJS builds is then at
 * most twice the size limit, however the anchors are arranged.
 */
function aliasesBroken(doc: Document): Refusal | null {
  let copied = 0;
  let refused: Refusal | null = null;
  visit(doc, {
    Alias(_, alias) {
      const target = alias.resolve(doc);
      if (!target) {
        // An alias of no anchor before it (yaml leaves that to toJS, which throws without a position).
        refused = { message: `the alias \`*${alias.source}\` refers to no anchor defined before it`, offset: alias.range?.[0] };
        return visit.BREAK;
      }
      if (isCollection(target)) {
        let nested = false;
        visit(target, {
          Alias: () => {
            nested = true;
            return visit.BREAK;
          },
        });
        if (nested) {
          refused = { message: `the alias \`*${alias.source}\` refers to a node that contains aliases itself`, offset: alias.range?.[0] };
          return visit.BREAK;
        }
      }
      const range = isScalar(target) || isCollection(target) ? target.range : undefined;
      copied += range ? range[1] - range[0] : 0;
      if (copied > TEXT_LIMITS.bytes) {
        refused = { message: `aliases copy more than ${TEXT_LIMITS.bytes / 1024} KB`, offset: alias.range?.[0] };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return refused;
}

/** The first mapping key that occurs twice in one mapping, with its position (linear: a Set per mapping; keys are scalars by now). */
function duplicateKey(doc: Document): Refusal | null {
  let found: Refusal | null = null;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        if (seen.has(key)) {
          found = { message: `the key \`${key.slice(0, 64)}\` appears twice in one mapping`, offset: isScalar(pair.key) ? pair.key.range?.[0] : undefined };
          return visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  return found;
}

function lineColumn(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: before.at(-1)!.length + 1 };
}

const invalid = (text: string, refusal: Refusal): RuleCheck => {
  const at = refusal.offset === undefined ? null : lineColumn(text, refusal.offset);
  return { ok: false, message: `invalid YAML${at ? ` at line ${at.line}, column ${at.col}` : ''}: ${refusal.message}` };
};

/** Options of the composer: YAML 1.2 core schema only, no merge keys, duplicate keys found in one linear pass above. */
const COMPOSE_OPTIONS = { version: '1.2', schema: 'core', merge: false, uniqueKeys: false, strict: true, prettyErrors: false, logLevel: 'error' } as const;

/** Parses `text` into a document within bounded work, or says why not. */
function boundedDocument(text: string): Document | Refusal {
  const limits = textLimitsBroken(text);
  if (limits) return limits;
  const lineCounter = new LineCounter();
  const cst = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  const shape = shapeBroken(cst);
  if (shape) return shape;
  // The composer makes an Error per problem it finds (thousands in hostile text); their stack traces are
  // most of the cost and never used, so none is captured meanwhile (synchronous: nothing else runs).
  const traces = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let docs: Document[];
  try {
    docs = Array.from(new Composer(COMPOSE_OPTIONS).compose(cst, true, text.length));
  } finally {
    Error.stackTraceLimit = traces;
  }
  const doc = docs[0];
  if (!doc) return { message: 'empty text' };
  const error = doc.errors[0];
  if (error) return { message: error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''), offset: error.pos[0] };
  // A core tag on a value it does not fit (`!!float 30`: this parser reads only `30.0` as a float) stays a string, and the
  // schema's "expected number, received string" would blame a value that reads as one.
  const unresolved = doc.warnings.find((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (unresolved) {
    const source = text.slice(unresolved.pos[0], unresolved.pos[1]);
    const hint = source === '!!float' ? ' (or a float with a point, 30.0)' : '';
    return {
      message: `the tag \`${source.slice(0, 40)}\` does not fit its value: write the value without the tag${hint}`,
      offset: unresolved.pos[0],
    };
  }
  return aliasesBroken(doc) ?? duplicateKey(doc) ?? doc;
}

/** Checks a rule set's YAML text. `message` says what is wrong and where; it never carries an internal exception's text. */
export function checkRuleText(name: RuleSetName, text: string, schema = SCHEMAS[name]): RuleCheck {
  let value: unknown;
  try {
    const doc = boundedDocument(text);
    if (!('contents' in doc)) return invalid(text, doc);
    // Aliases are bounded above (count, alias-free targets, bytes copied); yaml's own count includes the
    // anchor, so its limit would refuse the 50th alias, which is allowed, without saying why.
    value = doc.toJS({ maxAliasCount: -1 });
  } catch {
    // Nothing above should throw on any text; should it, the answer is still a clear 422.
    return { ok: false, message: 'invalid YAML: the text could not be read within the limits for rule sets' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'the rule set must be a YAML mapping' };
  const top = TOP_KEY[name];
  if (top && !(top in value)) return { ok: false, message: `${name} must have the top-level key \`${top}\`` };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // An unknown key is named by its own path, not its mapping's: the editor marks the line that holds it.
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
    return { ok: false, message: `${path.join('.') || 'rule set'}: ${issue.message}` };
  }
  return { ok: true, value: parsed.data as Record<string, unknown> };
}
