// Triage and disposition are free settings (spec §3); these are suggestions
// offered in the filters and the triage form, never a restriction.
export const TRIAGE_SUGGESTIONS = ['New', 'Acknowledged', 'Investigating', 'Mitigated', 'Closed'];
export const DISPOSITION_SUGGESTIONS = ['Actionable', 'Not actionable', 'False positive', 'Duplicate', 'Expected'];

/**
 * Whether an alert of the Ongoing issue started after its last triage: one closed as "Not actionable" and then
 * reopened by a new alert kept its Closed triage (grouping never touches triage) and read as settled.
 */
export const alertedSinceTriage = (issue: { status: string; updated_at?: string | null; last_seen: string }): boolean =>
  issue.status === 'Ongoing' && Boolean(issue.updated_at) && Date.parse(issue.last_seen) > Date.parse(issue.updated_at!);
