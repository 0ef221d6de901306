// Triage of an issue (PATCH) and ticket creation. Every change is audited with
// before and after, in the same transaction as the change itself and the move
// of the issues' generation marker (transactIssues), so the next list read in
// any container shows it.
import { randomUUID } from 'node:crypto';
import type { Caller } from '../auth/caller.js';
import { linkSettings } from '../config/links.js';
import { auditAction, instantAfter } from '../db/audit.js';
import { ConditionFailed, retryOnConflict, WriteConflict } from '../db/client.js';
import {
  claimTicket,
  getIssue,
  liveSuccessor,
  releaseClaimAction,
  markSuccessorUnconfirmed,
  markTicketUnconfirmed,
  releaseTicketClaim,
  storeTicketAction,
  transactIssues,
  triageAction,
  type IssueRecord,
  type TriageFields,
} from '../db/issues.js';
import { BadGateway, Conflict, NotFound, ServiceUnavailable } from '../http/errors.js';
import type { Principal } from '../auth/principal.js';
import { TicketProviderError, ticketProvider, type TicketRequest } from '../tickets/provider.js';
import { cutText, displayTime } from '../text.js';
import { resolveAssignee } from './assignee.js';
import { staleTriage, withTriageEtag } from './triage-etag.js';
import { issueAlerts, issueEvidence, requireIssue, SOURCE } from './queries.js';
import { createLogger, errorFields } from '../log.js';

const log = createLogger('issues/triage');

/**
 * PATCH. `expected`: the triage version the change was made on (If-Match, triage-etag.ts): when it has
 * moved on, a 409 and nothing changed. Without it, someone else's triage meanwhile is kept and ours
 * applied on top, with a fresh "before". `now`: a test's fixed instant; unset, each attempt stamps its own,
 * after the change it read (instantAfter), so a change that commits on a retry is audited after it.
 */
export async function updateTriage(principal: Principal, issueId: string, patch: Partial<TriageFields>, caller: Caller, now?: Date, expected?: number) {
  const changes = { ...patch };
  if (changes.assignee !== undefined) changes.assignee = await resolveAssignee(principal, changes.assignee);
  return retryOnConflict(async () => {
    const issue = await requireIssue(issueId);
    const at = now ?? instantAfter(issue.updated_at);
    // Out of every list (also when regrouping superseded it meanwhile: triageAction holds only on a live
    // issue, and this try reads afresh): the issue now holding its alerts is the one to triage.
    if (issue.superseded_by) throw await regrouped(issue, 'triage that one');
    const next = ticketLink(issue, changes);
    const fields = (Object.keys(next) as (keyof TriageFields)[]).filter((f) => issue[f] !== next[f]);
    // Stored already (a retry whose first answer was lost, or the same change made by someone else): the
    // change has succeeded, whatever version it was made on (RFC 9110 §13.1.1), so a 200, not a 409.
    if (fields.length === 0) return withTriageEtag(TRIAGED, issue.triage_version);
    if (expected !== undefined && issue.triage_version !== expected) throw staleTriage('Issue', issue);
    const before = Object.fromEntries(fields.map((f) => [f, issue[f]]));
    const after = Object.fromEntries(fields.map((f) => [f, next[f]]));
    await transactIssues([
      triageAction(issueId, after, issue.triage_version, principal.username, at),
      auditAction(
        {
          actor: principal.username,
          role: principal.role,
          action: 'issue_update',
          target: issueId,
          detail: { before, after },
          ip: caller.ip,
          user_agent: caller.userAgent,
        },
        at,
      ),
    ]);
    return withTriageEtag(TRIAGED, issue.triage_version + 1);
  });
}

/**
 * A PATCH's changes with the ticket link kept whole: a stored key's URL is that ticket's, so a PATCH that clears or
 * replaces the key and gives no URL takes the old URL with it (left, it opened the old ticket beside no key, or beside
 * another's). A URL linked with no key (an incident's page) stays when a key is first set: it is no ticket's.
 */
function ticketLink(issue: Pick<IssueRecord, 'ticket_key' | 'ticket_url'>, changes: Partial<TriageFields>): Partial<TriageFields> {
  if (changes.ticket_key === undefined || changes.ticket_url !== undefined || !issue.ticket_key || changes.ticket_key === issue.ticket_key || !issue.ticket_url)
    return changes;
  return { ...changes, ticket_url: '' };
}

/** PATCH's answer (with the ETag of the triage it left). */
const TRIAGED = { status: 'updated', source: SOURCE } as const;

/** 409 for a write to an issue regrouping superseded: names the live issue now holding its alerts (`superseded_by`). */
async function regrouped(issue: IssueRecord, instead: string): Promise<Conflict> {
  const live = await liveSuccessor(issue, getIssue);
  // No live issue to name (`regrouped`, or a chain that ends nowhere): no `superseded_by` to follow.
  if (!live) return new Conflict(`Issue ${issue.issue_id} was regrouped: its alerts now form other issues.`);
  return new Conflict(`Issue ${issue.issue_id} was regrouped into ${live.issue_id}: ${instead}.`, { superseded_by: live.issue_id });
}

/** A claim older than this is from a call that died: another may take over. */
export const TICKET_CLAIM_SECONDS = 60;
/**
 * The provider's answer must come this long after the request arrived, whatever TICKET_TIMEOUT_MS allows: a cold
 * start, the reads, the claim and the secret come before the call and the key's write after it, all inside the
 * route's 29 s. With less than a second of it left the call is not made (nothing sent: shared/tickets/post.ts).
 */
export const TICKET_ANSWER_WITHIN_MS = 25_000;
/** Tries to record a created ticket's key when concurrent triage keeps conflicting (each try retries conflicts itself). */
const STORE_ATTEMPTS = 3;
/** Moves of a created ticket to the issue that replaced its own, when regrouping keeps superseding the target. */
const STORE_MOVES = 3;

const appUrl = () => linkSettings().appUrl;

/** One alert's line in a ticket: its description's gist; the whole text is one click away in the app. */
export const TICKET_LINE_MAX = 1_000;
/**
 * The whole ticket description. Jira Cloud refuses a text field over 32,767 characters (ten alerts with
 * long descriptions made one of 200,000, and create-ticket a 502), and the Jira provider adds a paragraph
 * linking back to the app (APP_URL and the issue id): this leaves it room. Bounds the webhook's body too.
 */
export const TICKET_DESCRIPTION_MAX = 30_000;
/** The label that finds an issue's ticket in the tracker: after a failure that may have created it, the user looks for it. */
export const ticketLabel = (issueId: string) => `fleet-health-${issueId}`;
/** Jira's summary field takes 255 characters; cut whole (cutText), never through an emoji's surrogate pair. */
const TICKET_SUMMARY_MAX = 255;

/** One alert in a ticket: one line (a description's line breaks would split Jira's bullet list), at most TICKET_LINE_MAX. */
const alertLine = (a: { starts_at: string; status: string; alert_name: string; detail: string }) =>
  cutText(`- ${displayTime(a.starts_at)} ${a.status} ${a.alert_name}${a.detail ? `: ${a.detail}` : ''}`.replace(/\s+/g, ' '), TICKET_LINE_MAX);

/** The ticket's text: the issue, its alerts, and the evidence an engineer starts from. */
export async function ticketRequest(issue: IssueRecord, now: Date): Promise<TicketRequest> {
  const [alerts, evidence] = await Promise.all([issueAlerts(issue), issueEvidence(issue.issue_id, now)]);
  const cluster = evidence.cluster;
  const paragraphs = [
    `${issue.severity} issue on cluster ${issue.cluster_name} (${issue.customer_name || 'unknown customer'}): ${issue.issue_name}. ` +
      `${issue.status}; ${issue.alert_count} alert${issue.alert_count === 1 ? '' : 's'} since ${displayTime(issue.first_seen)}.`,
    cluster
      ? `Cluster: ${cluster.cluster_type} ${cluster.engine_version} in ${cluster.region}, ${cluster.node_count} nodes, tier ${cluster.customer_tier}, contact ${cluster.email}.`
      : 'The cluster is no longer in the inventory.',
    ['Latest alerts:', ...alerts.slice(0, 10).map(alertLine)].join('\n'),
  ];
  if (evidence.metrics.length) {
    paragraphs.push(
      [
        'Key metrics (today and yesterday):',
        ...evidence.metrics.map((m) => `- ${m.metric_key}: latest ${m.latest}, min ${m.min}, max ${m.max}, avg ${m.avg}`),
      ].join('\n'),
    );
  }
  return {
    issue_id: issue.issue_id,
    summary: cutText(
      `[${issue.severity}] ${issue.issue_name} on ${issue.cluster_name}${issue.customer_name ? ` (${issue.customer_name})` : ''}`,
      TICKET_SUMMARY_MAX,
    ),
    description: cutText(paragraphs.join('\n\n'), TICKET_DESCRIPTION_MAX),
    link: `${appUrl()}/issues/${encodeURIComponent(issue.issue_id)}`,
    labels: ['fleet-health', issue.severity.toLowerCase(), ticketLabel(issue.issue_id)],
    severity: issue.severity,
  };
}

/**
 * The live issue that replaced `issueId` while its create got no definite answer, told so (markSuccessorUnconfirmed);
 * undefined when nothing replaced it. One with a ticket already is answered as it is.
 */
async function unconfirmedOnSuccessor(issueId: string, now: Date): Promise<IssueRecord | undefined> {
  const claimed = await getIssue(issueId);
  if (!claimed?.superseded_by) return undefined;
  const live = await liveSuccessor(claimed, getIssue);
  if (live && !live.ticket_key) await markSuccessorUnconfirmed(live.issue_id, now);
  return live;
}

/**
 * One ticket per issue, also under a double click: the call first claims the
 * issue with a conditional write, then asks the provider, then stores the key
 * under its claim. A provider refusal gives the claim up and leaves the issue as it was; a failure
 * after the request went out (a timeout, a 5xx) records on the issue that a ticket may exist, and
 * another create then needs `again` (the user looked for it under its label and found none).
 * When regrouping superseded the issue meanwhile, the key goes to the live issue that replaced it.
 */
export async function createTicket(
  principal: Principal,
  issueId: string,
  caller: Caller,
  now = new Date(),
  // `receivedAt`: when the request arrived (epoch ms, the real clock: `now` is the issue's, which tests set).
  { again = false, receivedAt = Date.now() } = {},
) {
  const answerBy = receivedAt + TICKET_ANSWER_WITHIN_MS;
  const issue = await requireIssue(issueId);
  const existing = () =>
    new Conflict(`Issue ${issueId} has a ticket already: ${issue.ticket_key}.`, { ticket_key: issue.ticket_key, ticket_url: issue.ticket_url });
  if (issue.ticket_key) throw existing();
  if (issue.superseded_by) throw await regrouped(issue, 'create its ticket there');
  // The create's time is named for what it is: when one got no definite answer, or when one that lapsed began.
  const mayExist = (field: 'ticket_unconfirmed_at' | 'ticket_claimed_at', at: string, what: string) =>
    new Conflict(
      `A ticket may exist already: the create at ${at} ${what}. Look for one labelled ${ticketLabel(issueId)} (or with the label of an issue regrouping merged into this one) and link it (ticket_key and ticket_url by PATCH), or create another with again=true.`,
      { ticket_may_exist: true, ticket_label: ticketLabel(issueId), [field]: at },
    );
  const unanswered = 'got no definite answer from the tracker';
  if (issue.ticket_unconfirmed_at && !again) throw mayExist('ticket_unconfirmed_at', issue.ticket_unconfirmed_at, unanswered);
  const provider = ticketProvider();
  if (!provider) throw new ServiceUnavailable('No ticket provider is configured: set TICKET_PROVIDER (jira or webhook) and its settings.');
  const token = randomUUID();
  const staleBefore = new Date(now.getTime() - TICKET_CLAIM_SECONDS * 1000);
  try {
    await claimTicket(issueId, token, staleBefore, now, again);
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    const current = await getIssue(issueId);
    // Regrouping removes an untriaged issue its alerts no longer form (deleteGroupingAction): gone, not busy.
    if (!current) throw new NotFound(`No issue ${issueId}: regrouping removed it meanwhile. Its alerts are in another issue now.`);
    if (current.ticket_key)
      throw new Conflict(`Issue ${issueId} has a ticket already: ${current.ticket_key}.`, { ticket_key: current.ticket_key, ticket_url: current.ticket_url });
    if (current.superseded_by) throw await regrouped(current, 'create its ticket there');
    if (!again && current.ticket_unconfirmed_at) throw mayExist('ticket_unconfirmed_at', current.ticket_unconfirmed_at, unanswered);
    // A claim that lapsed: its create did not finish, and its request may have gone out with nothing recorded.
    if (!again && current.ticket_claimed_at && current.ticket_claimed_at < staleBefore.toISOString())
      throw mayExist('ticket_claimed_at', current.ticket_claimed_at, 'did not finish, and its request may have reached the tracker');
    throw new Conflict(`A ticket for issue ${issueId} is being created right now.`);
  }
  let ticket: { key: string; url: string };
  try {
    ticket = await provider.create(await ticketRequest(issue, now), answerBy);
  } catch (error) {
    const unknownOutcome = error instanceof TicketProviderError && error.mayExist;
    // Recorded on the issue, so every reader and the next create know. If that cannot be written the claim stays:
    // lapsed, it still tells the next create that a ticket may exist. Else the claim is given up.
    let replacedBy: IssueRecord | undefined;
    if (unknownOutcome) {
      await markTicketUnconfirmed(issueId, token, now).catch(() => undefined);
      // Regrouping may have merged the claimed issue meanwhile (it keeps it, superseded): the issue that replaced it is
      // where the next create would be asked for, and must know too.
      replacedBy = await unconfirmedOnSuccessor(issueId, now).catch(() => undefined);
    } else await releaseTicketClaim(issueId, token).catch(() => undefined);
    if (!(error instanceof TicketProviderError)) throw error;
    if (!error.mayExist) throw new BadGateway(`${error.message}. Nothing was created; you can try again.`);
    // The request went out and nothing said it was refused: another create could open a second ticket.
    log.warn('ticket provider failed after the request went out; the ticket may exist', { issue_id: issueId, provider: provider.name, reason: error.message });
    const linkTo = replacedBy ? `issue ${replacedBy.issue_id}, which replaced this one meanwhile` : 'this issue';
    throw new BadGateway(
      `${error.message}. The ticket may have been created all the same: look for one labelled ${ticketLabel(issueId)} and link it to ${linkTo} (ticket_key and ticket_url by PATCH) before creating another.`,
      { ticket_may_exist: true, ticket_label: ticketLabel(issueId), ...(replacedBy ? { superseded_by: replacedBy.issue_id } : {}) },
    );
  }
  // On our claimed issue, or on the live one that replaced it (our claim given up in the same transaction).
  const store = (holder: IssueRecord) => {
    const moved = holder.issue_id !== issueId;
    return transactIssues([
      storeTicketAction(holder.issue_id, moved ? null : token, ticket, principal.username, holder.ticket_url ?? '', now),
      ...(moved ? [releaseClaimAction(issueId, token)] : []),
      auditAction(
        {
          actor: principal.username,
          role: principal.role,
          action: 'ticket_create',
          target: holder.issue_id,
          detail: {
            provider: provider.name,
            ...(moved ? { created_for: issueId } : {}),
            before: { ticket_key: '', ticket_url: holder.ticket_url ?? '' },
            after: { ticket_key: ticket.key, ticket_url: ticket.url },
          },
          ip: caller.ip,
          user_agent: caller.userAgent,
        },
        now,
      ),
    ]);
  };
  const unrecorded = (why: string, extra: Record<string, unknown> = {}) =>
    new Conflict(`Ticket ${ticket.key} was created, but ${why}: link it with PATCH or close it.`, { ticket_key: ticket.key, ticket_url: ticket.url, ...extra });
  // The ticket exists now: storing its key is worth more tries than a plain write (every triage
  // transaction shares the issues' cache marker), and when it cannot be stored the answer still names
  // the ticket, so it can be linked or closed instead of created again once the claim expires.
  let holder = issue;
  for (let attempt = 1, moves = 0; ; attempt++) {
    try {
      await store(holder);
      break;
    } catch (error) {
      if (error instanceof WriteConflict && attempt < STORE_ATTEMPTS) continue;
      if (error instanceof WriteConflict) throw unrecorded('concurrent changes kept it from being recorded on the issue');
      if (!(error instanceof ConditionFailed)) {
        // DynamoDB kept refusing (throttled past the client's retries, say): a bare 500 would hide the ticket,
        // and a retry once the claim expires would create a second one.
        log.error('ticket created but not recorded', { issue_id: issueId, ticket_key: ticket.key, ...errorFields(error) });
        throw unrecorded('storing it on the issue failed');
      }
      // Our claim expired and another call took over, a PATCH linked a ticket meanwhile, or regrouping superseded the issue.
      const current = await getIssue(issueId);
      if (current?.ticket_claim !== token || !current.superseded_by || moves >= STORE_MOVES)
        throw unrecorded('the issue changed meanwhile and was not updated');
      // Superseded (out of every list): the ticket belongs on the live issue holding its alerts.
      const live = await liveSuccessor(current, getIssue);
      if (!live || live.ticket_key) {
        await releaseTicketClaim(issueId, token).catch(() => undefined); // expires by itself otherwise
        if (!live) throw unrecorded(`issue ${issueId} was regrouped meanwhile and no one issue holds its alerts now`);
        throw unrecorded(`issue ${issueId} was regrouped meanwhile into ${live.issue_id}, which has ticket ${live.ticket_key}`, {
          superseded_by: live.issue_id,
        });
      }
      holder = live;
      moves++;
      attempt = 0;
    }
  }
  return { status: 'created' as const, ticket_key: ticket.key, ticket_url: ticket.url, source: SOURCE };
}
