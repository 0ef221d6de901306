// One rule change proposal (/proposals/{id}): the live and the proposed YAML side
// by side (@codemirror/merge, loaded only here and on /rules), the impact preview
// (which clusters would change class or risk level), whether it is stale (based
// on a version no longer live), for superadmins approve/reject with a note, and
// for its proposer, while it is pending, a withdrawal.
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { BackLink } from '../components/list-link';
import { ApiProblem, call } from '../api/client';
import { invalidatePrefixes, useApi } from '../api/hooks';
import { type ChangeDetail, changeEndpoint, NAME_LABEL, RULE_SET_KEY, reviewEndpoint, withdrawEndpoint } from '../components/rules/api';
import { When } from '../components/time';
import { StatusBadge } from '../components/rules/status-badge';
import { forgetProposed } from '../components/rules/kept-edit';
import { YamlDiff } from '../components/rules/yaml-editor';
import { Loading, Problem } from '../components/states';
import { MAY_REVIEW_PROPOSALS } from '../api/access';
import { useSession } from '../session';
import '../components/rules/rules.css';
import './proposals.css';
import { Button } from '../components/button';
import { ImpactView } from '../components/rules/impact-view';

export default function ProposalPage() {
  const { changeId = '' } = useParams();
  const detail = useApi(changeEndpoint, { params: { change_id: changeId } }, { retry: (count, error) => error.status >= 500 && count < 2 });

  return (
    <section className="proposal-page" aria-labelledby="proposal-title">
      <p className="proposal-back">
        <BackLink list="/proposals">Proposals</BackLink>
      </p>
      {detail.isPending ? (
        <>
          <h1 id="proposal-title">Proposal</h1>
          <Loading what="the proposal" />
        </>
      ) : detail.isError ? (
        <>
          <h1 id="proposal-title">{detail.error.status === 404 ? 'Proposal not found' : 'Proposal'}</h1>
          <Problem error={detail.error} retry={detail.error.status === 404 ? undefined : () => void detail.refetch()} />
        </>
      ) : (
        <Proposal change={detail.data} />
      )}
    </section>
  );
}

function Proposal({ change }: { change: ChangeDetail }) {
  const { can } = useSession();
  const label = NAME_LABEL[change.rule_set];
  // Kept here: after a review the refetched proposal is no longer pending, and the form gives way to the decision.
  const [done, setDone] = useState<string | null>(null);
  // The buttons that did it give way to the decision: focus moves to what was done, not to the top of the page.
  const doneNotice = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done) doneNotice.current?.focus();
  }, [done]);
  return (
    <>
      <header className="proposal-header">
        <h1 id="proposal-title">
          {label}: proposal {change.change_id}
        </h1>
        <p>
          <StatusBadge status={change.status} />{' '}
          <span className="muted">
            proposed by {change.proposed_by}, <When iso={change.proposed_at} />, based on version {change.base_version}
          </span>
        </p>
      </header>
      {change.stale && change.status === 'pending' && (
        <p className="notice proposal-stale" role="note">
          <strong>Stale:</strong>{' '}
          {change.base_version === change.current_version
            ? `this proposal was made on the shipped default of an earlier release, and the service ships another default now (version ${change.current_version}).`
            : `this proposal was made on version ${change.base_version}, but version ${change.current_version} is live now.`}{' '}
          It cannot be approved as it is (the service refuses it with 409): reject it, and propose the change again on version {change.current_version} from the{' '}
          <Link to={`/rules?set=${RULE_SET_KEY[change.rule_set]}`}>Rules</Link> page.
        </p>
      )}
      <div className="proposal-layout">
        <div>
          <section aria-labelledby="diff-title">
            <h2 id="diff-title">Changes</h2>
            <ProposalDiff change={change} />
          </section>
          <Impact change={change} />
        </div>
        <aside aria-label="Review" className="proposal-aside">
          {done && (
            <p className="notice" role="status" tabIndex={-1} ref={doneNotice}>
              {done}
            </p>
          )}
          {can(...MAY_REVIEW_PROPOSALS) && change.status === 'pending' ? (
            <ReviewForm change={change} onDone={setDone} />
          ) : (
            <ReviewState change={change} onDone={setDone} />
          )}
        </aside>
      </div>
    </>
  );
}

/**
 * What the proposal changes: against the version it was based on, so a decided or stale proposal still shows its own
 * change (against the live text, an approved one showed nothing, and a stale one others' later change, reversed).
 * A pending, current proposal's base is the live version.
 */
function ProposalDiff({ change }: { change: ChangeDetail }) {
  const onLive = change.base_version === change.current_version && change.base_content === change.current_content;
  const base = change.base_content ?? change.current_content;
  const leftLabel = onLive
    ? `Live (version ${change.current_version})`
    : change.base_content === null
      ? `Live (version ${change.current_version}; the earlier default it was based on is not kept)`
      : `Version ${change.base_version}, which it was based on (version ${change.current_version} is live)`;
  return (
    <YamlDiff
      left={base}
      right={change.proposed_content}
      leftLabel={leftLabel}
      rightLabel={change.status === 'approved' ? 'Proposed (approved)' : 'Proposed'}
    />
  );
}

function ReviewState({ change, onDone }: { change: ChangeDetail; onDone(message: string): void }) {
  const { user } = useSession();
  return (
    <section className="card" aria-labelledby="review-title">
      <h2 id="review-title">Review</h2>
      {change.status === 'pending' ? (
        <>
          <p>Waiting for a superadmin's review.</p>
          {user?.username === change.proposed_by && <Withdraw change={change} onDone={onDone} />}
        </>
      ) : (
        <dl className="facts">
          <dt>Decision</dt>
          <dd>
            <StatusBadge status={change.status} />
          </dd>
          <dt>{change.status === 'withdrawn' ? 'Withdrawn by' : 'By'}</dt>
          <dd>{change.reviewed_by ?? '—'}</dd>
          <dt>When</dt>
          <dd>
            <When iso={change.reviewed_at} />
          </dd>
          <dt>Note</dt>
          <dd>{change.review_note || <span className="muted">none</span>}</dd>
          {change.applied_version !== null && (
            <>
              <dt>Applied as</dt>
              <dd>version {change.applied_version}</dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}

/** The proposer takes their pending proposal back (it stops counting against their ten pending ones). */
function Withdraw({ change, onDone }: { change: ChangeDetail; onDone(message: string): void }) {
  const client = useQueryClient();
  const { user } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const withdraw = async () => {
    setBusy(true);
    setError(null);
    try {
      await call(withdrawEndpoint, { params: { change_id: change.change_id } });
      // The Rules page keeps this text as proposed, waiting for review: it may be proposed again now.
      if (user) forgetProposed(user.username, RULE_SET_KEY[change.rule_set], change.proposed_content);
      onDone('Withdrawn: it will not be reviewed.');
    } catch (e) {
      // Reviewed meanwhile: the page gives way to the decision, so what happened is said above it, not in this form.
      if (e instanceof ApiProblem && e.status === 409) onDone(`Not withdrawn: ${e.detail}`);
      else setError(e);
    } finally {
      setBusy(false);
      // Withdrawn, or reviewed meanwhile (409): the page and the list show it as it is now.
      await invalidatePrefixes(client, ['/api/settings/config-changes']);
    }
  };
  return (
    <>
      <p className="muted">Made by mistake, or overtaken? Withdraw it: a superadmin will not review it.</p>
      <Button type="button" className="danger" disabled={busy} onClick={() => void withdraw()}>
        {busy ? 'Withdrawing…' : 'Withdraw this proposal'}
      </Button>
      {error ? <Problem error={error} /> : null}
    </>
  );
}

function ReviewForm({ change, onDone }: { change: ChangeDetail; onDone(message: string): void }) {
  const client = useQueryClient();
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState<'approve' | 'reject' | null>(null);
  const [error, setError] = useState<unknown>(null);

  const review = async (action: 'approve' | 'reject') => {
    setBusy(action);
    setError(null);
    try {
      const answer = await call(reviewEndpoint, { params: { change_id: change.change_id }, body: { action, note } });
      onDone(answer.status === 'approved' ? `Approved${answer.version ? `: version ${answer.version} is live` : ''}.` : 'Rejected.');
      // An approval changes scores and risk everywhere: every cached answer is refetched.
      await client.invalidateQueries();
    } catch (e) {
      // A 409 means it changed meanwhile (reviewed or withdrawn by someone else, or gone stale): read it again, so the
      // page shows that. A stale one stays pending (its form says why); one decided meanwhile loses its form, so why
      // is said above the decision.
      if (e instanceof ApiProblem && e.status === 409 && typeof e.body.current_version !== 'number')
        onDone(`Not ${action === 'approve' ? 'approved' : 'rejected'}: ${e.detail}`);
      else setError(e);
      if (e instanceof ApiProblem && e.status === 409) await invalidatePrefixes(client, ['/api/settings/config-changes']);
    } finally {
      setBusy(null);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!change.stale) void review('approve');
  };

  return (
    <form className="card proposal-review" aria-labelledby="review-title" onSubmit={submit}>
      <h2 id="review-title">Review</h2>
      <label htmlFor="review-note">Note (optional, kept with the decision)</label>
      <textarea id="review-note" rows={4} maxLength={2000} value={note} onChange={(e) => setNote(e.target.value)} />
      <div className="rules-actions">
        {/* A stale proposal cannot be approved (409): only rejected, then proposed again on the live version. */}
        {!change.stale && (
          <Button type="submit" className="primary" disabled={busy !== null}>
            {busy === 'approve' ? 'Approving…' : 'Approve and apply'}
          </Button>
        )}
        <Button type="button" className="danger" disabled={busy !== null} onClick={() => void review('reject')}>
          {busy === 'reject' ? 'Rejecting…' : 'Reject'}
        </Button>
      </div>
      {/* Stale: the 409 names the live version (the server's detail says against what, and what to do); any other 409 (reviewed already, no longer passes the checks) is a plain problem. */}
      {error instanceof ApiProblem && error.status === 409 && typeof error.body.current_version === 'number' ? (
        <div className="state problem" role="alert">
          <strong>Not approved: the proposal is stale (409)</strong>
          <p>{error.detail}</p>
        </div>
      ) : error ? (
        <Problem error={error} />
      ) : null}
    </form>
  );
}

function Impact({ change }: { change: ChangeDetail }) {
  const impact = change.impact;
  return (
    <section className="proposal-section" aria-labelledby="impact-title">
      <h2 id="impact-title">Impact</h2>
      {!impact ? (
        <p className="muted">
          {change.rule_set === 'issue-rules' ? (
            'Issue rules group alerts into issues; they change no cluster’s class or risk level, so there is no impact preview.'
          ) : change.rule_set === 'metric-sources' ? (
            'Metric sources say where metrics are pulled from; they change no cluster’s class or risk level by themselves, so there is no impact preview.'
          ) : change.status !== 'pending' ? (
            <DecidedImpact change={change} />
          ) : (
            'No impact preview is available for this proposal.'
          )}
        </p>
      ) : (
        <ImpactView impact={impact} after="With the proposal" />
      )}
    </section>
  );
}

/**
 * A decided health or risk proposal has no preview (the service computes one only while it waits for review): the
 * approver saw the preview give way to "No impact preview is available" right after approving, with no word of
 * whether the change took effect. Said instead: what became of it, and where the fleet shows it now.
 */
function DecidedImpact({ change }: { change: ChangeDetail }) {
  const [where, path] = change.rule_set === 'risk-rules' ? (['Risk page', '/risk'] as const) : (['Fleet overview', '/'] as const);
  const measure = change.rule_set === 'risk-rules' ? 'risk levels' : 'health scores and classes';
  if (change.status === 'approved' && change.applied_version !== null) {
    return (
      <>
        Applied as version {change.applied_version}
        {change.applied_version === change.current_version ? ', the live version' : `; version ${change.current_version} is live now`}: the fleet’s {measure}{' '}
        follow the live version, shown on the <Link to={path}>{where}</Link>. A preview of what a proposal would change is computed only while it waits for
        review.
      </>
    );
  }
  return (
    <>
      {change.status === 'withdrawn' ? 'Withdrawn' : change.status === 'rejected' ? 'Rejected' : 'Not applied'}: it changed nothing. A preview of what a
      proposal would change is computed only while it waits for review.
    </>
  );
}
