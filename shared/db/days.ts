// The UTC days a window of history covers, as the day-partitioned tables (metrics, alerts, the LLM ledger) key them.
// A module of its own: a repository that needs the days (the ledger, read by a patrol route when a stopped scan is
// found) does not load the metrics repository, and with it the rollup schemas, for them.

/** The UTC days of a window ending today: `days` of them, oldest first. */
export function windowDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}
