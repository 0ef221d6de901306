// The triage form (admins and superadmins) of alert issues and AI issues: triage
// status, disposition, assignee (an active account from the list's users route)
// and notes, sent by PATCH with only the fields that changed, and If-Match with the
// ETag of the issue as read: another admin's save meanwhile is a 409, never
// silently overwritten; the issue is read again and the edits kept. After saving, the
// issue is read again and the values the service stored are shown, so what the
// page says is what was kept. Unsaved edits survive the issue being read again.
// AI issues also offer "Me" as assignee (sent as `me`, which the service resolves
// to the caller). An unsaved edit is kept in the tab (kept-triage.ts): leaving the issue,
// or a session that ends mid-edit, does not lose it.
import { useEffect, useId, useState } from 'react';
import type { ApiProblem, Endpoint } from '../../api/client';
import { endpoint } from '../../api/client';
import { useApi, useApiMutation } from '../../api/hooks';
import type { Answer, BodyOf } from '../../api/types';
import { useSession } from '../../session';
import { Problem } from '../states';
import { Maybe, utc } from './format';
import { SuggestField } from './suggest-field';
import { keepTriage, readTriage } from './kept-triage';
import { DISPOSITION_SUGGESTIONS, TRIAGE_SUGGESTIONS } from './triage-values';
import { Button } from '../button';
// In English like the limit beside it: the browser's language wrote 1.234 / 10,000 in a German console.
import { count } from '../format';

/** Each list's routes; the rest of the form is the same for both. */
const ROUTES = {
  issues: {
    users: endpoint<'issues', 'users'>('GET', '/api/issues/users'),
    patch: endpoint<'issues', 'patch'>('PATCH', '/api/issues/{issue_id}'),
    invalidates: ['/api/issues'],
  },
  'ai-issues': {
    users: endpoint<'ai-issues', 'users'>('GET', '/api/ai-issues/users'),
    patch: endpoint<'ai-issues', 'patch'>('PATCH', '/api/ai-issues/{issue_id}'),
    invalidates: ['/api/ai-issues'],
  },
};
type Group = keyof typeof ROUTES;

type Issue = Answer<'issues', 'get'>['issue'] | Answer<'ai-issues', 'get'>['issue'];
type Fields = Pick<Issue, 'triage_status' | 'disposition_status' | 'assignee' | 'notes'>;
const FIELDS = ['triage_status', 'disposition_status', 'assignee', 'notes'] as const;
const FIELD_LABELS: Record<keyof Fields, string> = { triage_status: 'Triage status', disposition_status: 'Disposition', assignee: 'Assignee', notes: 'Notes' };
const storedFields = (issue: Issue): Fields => ({
  triage_status: issue.triage_status,
  disposition_status: issue.disposition_status,
  assignee: issue.assignee,
  notes: issue.notes,
});

export function TriageForm({
  group,
  issue,
  etag,
  refetch,
  me = false,
}: {
  /** Which list's routes the form reads accounts from and saves to. */
  group: Group;
  issue: Issue;
  /** The ETag the issue was read with (its triage version), sent as If-Match. */
  etag: string | null;
  refetch: () => Promise<unknown>;
  /** Offer "Me" (sent as `me`) as an assignee. */
  me?: boolean;
}) {
  const [saved, setSaved] = useState<(Fields & { at: string; by: string }) | null>(null);
  return (
    <section className="card issue-triage" aria-labelledby="triage-title">
      <h2 id="triage-title">Triage</h2>
      <Form group={group} issue={issue} etag={etag} refetch={refetch} me={me} onSaved={setSaved} />
      {/* The status region is there before the notice: one inserted already filled is skipped by many screen readers. */}
      <div role="status">
        {saved && (
          <div className="notice issue-saved">
            <p>
              Saved {utc(saved.at)}
              {saved.by ? ` by ${saved.by}` : ''}. Stored now:
            </p>
            <dl className="facts">
              <dt>Triage status</dt>
              <dd>
                <Maybe value={saved.triage_status} />
              </dd>
              <dt>Disposition</dt>
              <dd>
                <Maybe value={saved.disposition_status} />
              </dd>
              <dt>Assignee</dt>
              <dd>
                <Maybe value={saved.assignee} />
              </dd>
              <dt>Notes</dt>
              <dd className="issue-notes">
                <Maybe value={saved.notes} />
              </dd>
            </dl>
          </div>
        )}
      </div>
    </section>
  );
}

function Form({
  group,
  issue,
  etag,
  refetch,
  me,
  onSaved,
}: {
  group: Group;
  issue: Issue;
  etag: string | null;
  me: boolean;
  refetch: () => Promise<unknown>;
  onSaved: (saved: (Fields & { at: string; by: string }) | null) => void;
}) {
  const id = useId();
  const { user } = useSession();
  const routes = ROUTES[group];
  // Both lists' users and patch routes take and answer the same shapes.
  const users = useApi(routes.users as Endpoint<'issues', 'users'>, {}, { staleTime: 60_000 });
  const patch = useApiMutation(routes.patch as Endpoint<'issues', 'patch'>, routes.invalidates);
  // The draft keeps the stored version it started from. When the issue is read again with another
  // version (a save, a ticket, another admin's triage), fields not edited here follow what is stored,
  // and edits are kept, never swapped for the stored text; those stored meanwhile are named below.
  const version = `${issue.updated_at}|${issue.updated_by}`;
  const stored = storedFields(issue);
  // "Me" is stored as the caller's username: compared as that, a saved "Me" is neither an unsaved edit nor a change by someone else.
  const asStored = (f: keyof Fields, value: string) => (me && f === 'assignee' && value === 'me' && user ? user.username : value);
  // An edit kept from before (the page left, the session ended) starts from the version it was made on: the
  // reconciliation below keeps its edits and names what was stored since.
  const [draft, setDraft] = useState(() => {
    const kept = user ? readTriage<Fields>(user.username, group, issue.issue_id, FIELDS) : null;
    return kept ? { ...kept, meanwhile: [] as (keyof Fields)[] } : { version, base: stored, values: stored, meanwhile: [] as (keyof Fields)[] };
  });
  if (draft.version !== version) {
    const values = { ...draft.values };
    const meanwhile: (keyof Fields)[] = [];
    for (const f of FIELDS) {
      // Not edited here, or stored as edited (this form's save): take what is stored.
      if (draft.values[f] === draft.base[f] || asStored(f, draft.values[f]) === stored[f]) values[f] = stored[f];
      else if (stored[f] !== draft.base[f]) meanwhile.push(f);
    }
    setDraft({ version, base: stored, values, meanwhile });
  }
  const values = draft.version === version ? draft.values : stored;
  const meanwhile = draft.version === version ? draft.meanwhile : [];
  // An edit keeps the note of what was stored meanwhile; a discard takes what is stored, so it goes.
  const discard = () => setDraft((d) => ({ ...d, values: stored, meanwhile: [] }));
  const changes: BodyOf<'issues', 'patch'> = {};
  for (const f of FIELDS) if (asStored(f, values[f]) !== issue[f]) changes[f] = values[f];
  const changed = Object.keys(changes).length > 0;
  // Kept while it differs from what is stored; a save or a discard (nothing left to send) drops it.
  const username = user?.username;
  useEffect(() => {
    if (!username || draft.version !== version) return;
    keepTriage(username, group, issue.issue_id, changed ? { version: draft.version, base: draft.base, values: draft.values } : null);
  }, [username, group, issue.issue_id, changed, draft, version]);
  const [savedUnread, setSavedUnread] = useState(false);
  const set = (field: keyof Fields) => (e: { target: { value: string } }) => {
    onSaved(null);
    setSavedUnread(false);
    setDraft((d) => ({ ...d, values: { ...d.values, [field]: e.target.value } }));
  };

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    if (!changed) return;
    try {
      await patch.mutateAsync({ params: { issue_id: issue.issue_id }, body: changes, headers: etag ? { 'if-match': etag } : {} });
    } catch (error) {
      // Saved by someone else since it was read: read it again; the edits stay, and what changed meanwhile is named.
      if ((error as ApiProblem).status === 409 && (error as ApiProblem).body.current_etag) void refetch();
      return; // shown below from patch.error
    }
    // The mutation refetched the issue; read it once more to show exactly what is stored. If that read fails, the
    // save still happened (the PATCH answered 200), but what is stored is not known: nothing is claimed about it.
    const fresh = (await refetch()) as { data?: { issue: Issue }; isError?: boolean };
    const stored = fresh.data?.issue;
    if (!stored || fresh.isError) {
      onSaved(null);
      setSavedUnread(true);
      return;
    }
    setSavedUnread(false);
    onSaved({
      triage_status: stored.triage_status,
      disposition_status: stored.disposition_status,
      assignee: stored.assignee,
      notes: stored.notes,
      at: stored.updated_at,
      by: stored.updated_by,
    });
  }

  const userList = users.data?.users ?? [];
  const assigneeKnown = !values.assignee || (me && values.assignee === 'me') || userList.some((u) => u.username === values.assignee);

  return (
    <form className="issue-triage-form" onSubmit={(e) => void submit(e)} aria-describedby={patch.isError ? `${id}-error` : undefined}>
      <SuggestField
        label="Triage status"
        value={values.triage_status}
        onChange={set('triage_status')}
        listId={`${id}-triage`}
        suggestions={TRIAGE_SUGGESTIONS}
      />
      <SuggestField
        label="Disposition"
        value={values.disposition_status}
        onChange={set('disposition_status')}
        listId={`${id}-disposition`}
        suggestions={DISPOSITION_SUGGESTIONS}
      />
      <label>
        Assignee
        <select value={values.assignee} onChange={set('assignee')} disabled={users.isPending} aria-describedby={`${id}-assignee-help`}>
          <option value="">Unassigned</option>
          {me && <option value="me">Me{user ? ` (${user.username})` : ''}</option>}
          {!assigneeKnown && <option value={values.assignee}>{values.assignee} (not an active account)</option>}
          {userList.map((u) => (
            <option key={u.username} value={u.username}>
              {u.name && u.name !== u.username ? `${u.name} (${u.username})` : u.username}
            </option>
          ))}
        </select>
        <span id={`${id}-assignee-help`} className="muted issue-help">
          {users.isPending ? 'Loading accounts…' : users.isError ? `Accounts could not be read: ${users.error.detail}` : 'Active accounts'}
        </span>
      </label>
      <label className="issue-notes-field">
        Notes
        <textarea value={values.notes} onChange={set('notes')} maxLength={10_000} rows={5} />
        <span className="muted issue-help">{count(values.notes.length)} / 10,000</span>
      </label>
      {meanwhile.length > 0 && changed && (
        <div className="notice" role="status">
          <p>
            {meanwhile.map((f) => FIELD_LABELS[f]).join(', ')} {meanwhile.length > 1 ? 'were' : 'was'} changed by {issue.updated_by || 'someone'}{' '}
            {utc(issue.updated_at)} while you edited. Your edits are kept: save to store them, or discard them to take what is stored.
          </p>
        </div>
      )}
      <div className="issue-actions">
        <Button type="submit" className="primary" disabled={!changed || patch.isPending}>
          {patch.isPending ? 'Saving…' : 'Save triage'}
        </Button>
        {/* Always there, dimmed with nothing to discard (as on the Rules page): a button that vanished on its own click dropped the keyboard focus to the top of the page. */}
        <Button type="button" onClick={discard} disabled={!changed || patch.isPending}>
          Discard changes
        </Button>
      </div>
      {savedUnread && !patch.isError && (
        <p className="notice" role="status">
          Saved, but the issue could not be read again to show what is stored now: reload the page to see it.
        </p>
      )}
      {patch.isError && (
        <div id={`${id}-error`}>
          <Problem error={patch.error as ApiProblem} liveIssues={`/${group}`}>
            {(patch.error as ApiProblem).body.current_etag !== undefined && (
              <p className="muted">The form now shows what is stored, with your edits kept: check them and save again.</p>
            )}
          </Problem>
        </div>
      )}
    </form>
  );
}
