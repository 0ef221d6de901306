// Column settings the alert-issue and AI-issue tables share (each list page names
// its own columns with `column.accessor(field, COLUMNS.x)`).
import { createContext, useContext } from 'react';
import { count } from '../format';
import { duration, Maybe, Severity, Status, utc } from './format';

type Cell<V> = { getValue: () => V };

/** The display names of the accounts the page knows (an admin's list reads them: useAssignees), by username. */
export const AssigneeNames = createContext<ReadonlyMap<string, string>>(new Map());

/** An assignee by name where the page knows it (an invitee's username is their email), the username as its tooltip. */
function Assignee({ username }: { username: string }) {
  const name = useContext(AssigneeNames).get(username);
  if (!name || name === username) return <Maybe value={username} />;
  return <span title={username}>{name}</span>;
}

export const COLUMNS = {
  severity: { header: 'Severity', size: 88, cell: (c: Cell<string>) => <Severity value={c.getValue()} /> },
  status: { header: 'Status', size: 92, cell: (c: Cell<string>) => <Status value={c.getValue()} /> },
  alerts: { header: 'Alerts', size: 64, meta: { numeric: true }, cell: (c: Cell<number>) => count(c.getValue()) },
  lastSeen: {
    header: 'Last seen (UTC)',
    size: 144,
    cell: (c: Cell<string>) => (
      <time dateTime={c.getValue()} title={utc(c.getValue())}>
        {utc(c.getValue(), { label: false })}
      </time>
    ),
  },
  duration: { header: 'Duration', size: 104, meta: { numeric: true }, cell: (c: Cell<number>) => duration(c.getValue()) },
  assignee: { header: 'Assignee', size: 120, cell: (c: Cell<string>) => <Assignee username={c.getValue()} /> },
};

/** A text column that says so when the value is empty. */
export const maybe = (header: string, size: number, className?: string) => ({
  header,
  size,
  ...(className ? { meta: { className } } : {}),
  cell: (c: Cell<string>) => <Maybe value={c.getValue()} />,
});
