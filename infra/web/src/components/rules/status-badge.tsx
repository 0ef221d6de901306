// A proposal's status as a badge (pending, approved, rejected, withdrawn).
import type { ChangeSummary } from './api';

export function StatusBadge({ status }: { status: ChangeSummary['status'] }) {
  return <span className={`badge proposal-${status}`}>{status}</span>;
}
