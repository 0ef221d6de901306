// A rule change proposal's statuses, apart from its repository (config-changes.ts) so the
// route table can name them without loading the DynamoDB client.

/** `withdrawn` (beyond DESIGN §7's three): its proposer took it back before a review. */
export const CHANGE_STATUSES = ['pending', 'approved', 'rejected', 'withdrawn'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];
