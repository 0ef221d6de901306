// Values as the chat assistant's SQL snapshot stores them (numbers, text,
// JSON text, NULL), and quoting names and text into SQL. Shared by the packing
// of the snapshot (sql-snapshot.ts), the tables (sql-tables.ts), loading
// (sql-load.ts) and query results (sql-query.ts).

/** A cell of the snapshot or of a query's answer. */
export type SqlValue = string | number | null;

/** A number SQLite can store (NaN and infinities become NULL). */
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const text = (v: unknown): string | null => (v === undefined || v === null ? null : typeof v === 'string' ? v : String(v));
/** Arrays and objects as JSON text (json_each / json_extract read them). */
export const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));

/** A quoted SQL name (table, column, index). */
export const quote = (name: string) => `"${name}"`;
/** A SQL string literal (SQLite has no backslash escapes: doubling the quote is the whole rule). */
export const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
