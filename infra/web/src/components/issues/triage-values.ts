// Triage and disposition are free settings (spec §3); these are suggestions
// offered in the filters and the triage form, never a restriction.
export const TRIAGE_SUGGESTIONS = ['New', 'Acknowledged', 'Investigating', 'Mitigated', 'Closed'];
export const DISPOSITION_SUGGESTIONS = ['Actionable', 'Not actionable', 'False positive', 'Duplicate', 'Expected'];
