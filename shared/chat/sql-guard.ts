// The statement guard of run_sql: reads SQL text the way SQLite's tokenizer
// does (comments, literals, quoted names), without SQLite, and says why a text
// is refused. sql-query.ts applies it before SQLite prepares anything, since
// preparing some statements (flag pragmas) already changes the connection.

const ALLOWED =
  'Only one read-only SELECT statement is allowed (WITH … SELECT is fine): the snapshot cannot be changed, and PRAGMA, ATTACH and transactions are not available.';

type Token = { kind: 'word' | 'ident' | 'group' | 'punct'; text: string };

/**
 * The top-level tokens of SQL text: words (upper-cased), quoted identifiers,
 * parenthesised groups as one token each, and any other character (digits,
 * punctuation) as one token; whitespace, comments and string literals are
 * skipped, as SQLite's tokenizer does. Enough to find which statement a text
 * starts with, not to parse it (SQLite does that).
 */
function topLevelTokens(sql: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  const skipQuoted = (close: string) => {
    // From the opening quote to its match; a doubled quote is an escaped one.
    for (i++; i < sql.length; i++) {
      if (sql[i] === close) {
        if (close !== ']' && sql[i + 1] === close) i++;
        else return void i++;
      }
    }
  };
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (ch === "'") {
      skipQuoted("'");
    } else if (ch === '"' || ch === '`' || ch === '[') {
      const start = i;
      skipQuoted(ch === '[' ? ']' : ch);
      if (depth === 0) tokens.push({ kind: 'ident', text: sql.slice(start, i) });
    } else if (ch === '(') {
      if (depth === 0) tokens.push({ kind: 'group', text: '(' });
      depth++;
      i++;
    } else if (ch === ')') {
      depth = Math.max(0, depth - 1);
      i++;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(ch)) {
      const start = i;
      while (i < sql.length && /[\w$\u0080-\uffff]/.test(sql[i]!)) i++;
      if (depth === 0) tokens.push({ kind: 'word', text: sql.slice(start, i).toUpperCase() });
    } else if (/\s/.test(ch)) {
      i++;
    } else {
      if (depth === 0) tokens.push({ kind: 'punct', text: ch });
      i++;
    }
  }
  return tokens;
}

/**
 * The statement's kind: its first word, or for `WITH … <statement>` the word
 * after the common table expressions (SQLite also allows WITH before INSERT,
 * UPDATE and DELETE). Null when it cannot tell.
 */
export function statementVerb(sql: string): string | null {
  const t = topLevelTokens(sql);
  let i = 0;
  const word = () => (t[i]?.kind === 'word' ? t[i]!.text : undefined);
  if (word() !== 'WITH') return word() ?? null;
  i++;
  if (word() === 'RECURSIVE') i++;
  for (;;) {
    // name [(columns)] AS [NOT] [MATERIALIZED] (select) [, …]
    if (t[i]?.kind !== 'word' && t[i]?.kind !== 'ident') return null;
    i++;
    if (t[i]?.kind === 'group') i++;
    if (word() !== 'AS') return null;
    i++;
    if (word() === 'NOT') i++;
    if (word() === 'MATERIALIZED') i++;
    if (t[i]?.kind !== 'group') return null;
    i++;
    if (t[i]?.kind === 'punct' && t[i]!.text === ',') {
      i++;
      continue;
    }
    return word() ?? null;
  }
}

/** True when SQL text holds no statement: only whitespace, comments and semicolons. */
export function isBlankSql(sql: string): boolean {
  return topLevelTokens(sql).every((t) => t.kind === 'punct' && t.text === ';');
}

/** Statements in SQL text that must not be prepared: non-blank stretches between top-level semicolons. */
function countStatements(sql: string): number {
  let count = 0;
  let inStatement = false;
  for (const token of topLevelTokens(sql)) {
    if (token.kind === 'punct' && token.text === ';') inStatement = false;
    else if (!inStatement) {
      inStatement = true;
      count++;
    }
  }
  return Math.max(count, 1);
}

/** Why a text is refused before SQLite sees any of it (it does not read as a SELECT); null when its first statement may be prepared. */
export function refusalBeforePrepare(sql: string): string | null {
  const verb = statementVerb(sql);
  if (verb === 'SELECT') return null;
  const why = verb !== null ? `${verb} statements are not allowed.` : isBlankSql(sql) ? 'The text holds no SQL statement.' : 'This is not a SELECT statement.';
  return `${why} ${ALLOWED}`;
}

/** The refusal when SQLite finds no statement in the text. */
export const NO_STATEMENT = `The text holds no SQL statement. ${ALLOWED}`;

/** Why the text after the first statement (where SQLite says it ends) is refused: it holds more SQL; null when it holds none. */
export function refusalOfRemainder(rest: string): string | null {
  if (isBlankSql(rest)) return null;
  return `Send one statement per call: this text holds ${1 + countStatements(rest)} (after the first SELECT comes more SQL). ${ALLOWED}`;
}
