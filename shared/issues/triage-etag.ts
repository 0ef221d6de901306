// Triage preconditions, for alert issues and AI issues alike. An issue's triage version moves with every
// PATCH and stored ticket; GET answers it as the ETag `"t<version>"`, and a PATCH that sends it back as
// If-Match is applied only while it is still current. Without If-Match a PATCH applies its fields on
// top of whatever is stored (its own before/after audited), as before: an API client's choice.
import { Conflict } from '../http/errors.js';
import { triageEtag } from '../http/etags.js';
import { ifMatchNumber } from '../http/if-match.js';
import { Reply } from '../http/route.js';
import { displayTime } from '../text.js';

/** `body` answered with the ETag of triage `version`: GET's, or the one a PATCH left (a next PATCH's If-Match, no GET between). */
export const withTriageEtag = <T>(body: T, version: number) => new Reply(200, body, { ETag: triageEtag(version) });

/** The triage version an If-Match names; undefined without one (or with `*`), a 400 for anything else. */
export const expectedTriage = (ifMatch: string | undefined) => ifMatchNumber(ifMatch, 't', 'this issue');

interface Triaged {
  issue_id: string;
  triage_version: number;
  updated_at: string;
  updated_by: string;
  triage_status: string;
  disposition_status: string;
  assignee: string;
  notes: string;
}

/** 409 for a PATCH made on a triage that has moved on: nothing was changed; the answer carries what is stored now. */
export function staleTriage(what: 'Issue' | 'AI issue', issue: Triaged): Conflict {
  const by = issue.updated_by ? ` by ${issue.updated_by}` : '';
  return new Conflict(
    `${what} ${issue.issue_id} was changed${by} at ${displayTime(issue.updated_at)} after you read it: nothing was changed. Read it again and make your change on what is stored now.`,
    {
      current_etag: triageEtag(issue.triage_version),
      current: { triage_status: issue.triage_status, disposition_status: issue.disposition_status, assignee: issue.assignee, notes: issue.notes },
    },
  );
}
