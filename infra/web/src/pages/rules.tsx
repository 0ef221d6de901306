// The rule sets (/rules?set=health|issue|risk|metric-sources): the live YAML in an editor with
// syntax highlighting (CodeMirror, loaded only here), its version and ETag, and
// saving based on that version (If-Match and base_version). A superadmin's save
// applies; anyone else's becomes a proposal. A 422 is marked at its line and
// column; a 409 (someone saved first) keeps the user's text and offers to
// re-apply it on the live version. Below, the applied versions, and last the shipped
// default (version 0), which can be loaded to go back to it. An unsaved edit is
// kept per rule set for the tab (kept-edit.ts), so switching tabs does not lose it.
// A health or risk rules edit can be previewed before it is saved: which clusters it would move.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type KeyboardEvent, type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { ApiProblem, send } from '../api/client';
import { invalidatePrefixes, useApi } from '../api/hooks';
import {
  changesEndpoint,
  IMPACT_ENDPOINTS,
  type LiveRules,
  RULE_ENDPOINTS,
  RULE_SET_APPLIES,
  RULE_SET_HELP,
  RULE_SET_LABEL,
  RULE_SETS,
  type RuleSetKey,
  type SubmitAnswer,
} from '../components/rules/api';
import { ImpactView, type RuleImpact } from '../components/rules/impact-view';
import { keepEdit, readEdit } from '../components/rules/kept-edit';
import { locate, namesPosition, refusalMessage } from '../components/rules/problem-position';
import { hasConflictMarkers, MINE_MARKER, reapply } from '../components/rules/reapply';
import { type TextProblem, YamlDiff, YamlEditor, type YamlEditorApi } from '../components/rules/yaml-editor';
import { Empty, Loading, Problem } from '../components/states';
import { When } from '../components/time';
import { ruleSetEtag } from '../../../../shared/http/etags.js';
import { useUrlState } from '../components/url-state';
import { useSession } from '../session';
import '../components/rules/rules.css';
import './rules.css';
import { Button } from '../components/button';

const URL_DEFAULTS = { set: 'health' };

export default function RulesPage() {
  const [url, setUrl] = useUrlState(URL_DEFAULTS);
  const set: RuleSetKey = (RULE_SETS as readonly string[]).includes(url.set as string) ? (url.set as RuleSetKey) : 'health';
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);

  const onKey = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    const to = event.key === 'Home' ? 0 : event.key === 'End' ? RULE_SETS.length - 1 : step ? (index + step + RULE_SETS.length) % RULE_SETS.length : -1;
    if (to === -1) return;
    event.preventDefault();
    setUrl({ set: RULE_SETS[to]! });
    tabs.current[to]?.focus();
  };

  return (
    <section className="rules-page" aria-labelledby="rules-title">
      <h1 id="rules-title">Rules</h1>
      <p className="muted rules-intro">
        The rule sets in force, as YAML. A superadmin's save applies at once; anyone else's becomes a <Link to="/proposals">proposal</Link> for a superadmin to
        review.
      </p>
      <div className="rules-tabs" role="tablist" aria-label="Rule set">
        {RULE_SETS.map((key, index) => (
          <button
            key={key}
            ref={(el) => {
              tabs.current[index] = el;
            }}
            type="button"
            role="tab"
            id={`rules-tab-${key}`}
            aria-selected={key === set}
            aria-controls="rules-panel"
            tabIndex={key === set ? 0 : -1}
            onClick={() => setUrl({ set: key })}
            onKeyDown={(e) => onKey(e, index)}
          >
            {RULE_SET_LABEL[key]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="rules-panel" aria-labelledby={`rules-tab-${set}`} className="rules-panel">
        <RuleSetEditor key={set} set={set} />
      </div>
    </section>
  );
}

type Outcome =
  | { kind: 'applied'; version: number }
  | { kind: 'proposed'; changeId: string; baseVersion: number }
  | { kind: 'refused'; message: string; at: TextProblem | null }
  | { kind: 'stale'; current: number; base: number; detail: string }
  | { kind: 'rebased'; version: number; conflicts: number }
  | { kind: 'failed'; error: unknown };

interface Base {
  version: number;
  content: string;
}

function RuleSetEditor({ set }: { set: RuleSetKey }) {
  const eps = RULE_ENDPOINTS[set];
  const { can, user } = useSession();
  const superadmin = can('superadmin');
  const client = useQueryClient();
  const live = useQuery<LiveRules & { etag: string }, ApiProblem>({
    queryKey: ['rules-live', set],
    queryFn: async ({ signal }) => {
      const answer = await send(eps.get, { signal });
      const data = answer.data as LiveRules;
      return { ...data, etag: answer.headers.get('ETag') ?? ruleSetEtag(data.version) };
    },
  });

  const editor = useRef<YamlEditorApi>(null);
  // An edit kept from an earlier visit (another tab of this page, another page) starts where it was left.
  const [kept] = useState(() => (user ? readEdit(user.username, set) : null));
  const [base, setBase] = useState<Base | null>(kept?.base ?? null);
  const [draft, setDraft] = useState(kept?.draft ?? '');
  const [proposal, setProposal] = useState<{ text: string; id: string | null } | null>(
    kept?.proposed != null ? { text: kept.proposed, id: kept.proposedId ?? null } : null,
  );
  const [problems, setProblems] = useState<TextProblem[]>([]);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [saving, setSaving] = useState(false);
  const [comparing, setComparing] = useState(false);
  // The edit beside the version it is based on, before it is saved (for a superadmin, before it applies).
  const [reviewing, setReviewing] = useState(false);
  const [preview, setPreview] = useState<Preview | null>(null);
  const previewAsked = useRef(0);
  const draftNow = useRef(draft);
  draftNow.current = draft;
  /** No preview shown, and an answer still coming dropped: the text it was for is saved, discarded or re-based. */
  const dropPreview = useCallback(() => {
    previewAsked.current++;
    setPreview(null);
  }, []);

  // The first answer starts the edit; a newer live version replaces the text only while the user has not edited it
  // (or their text is what is live now, e.g. their proposal was approved).
  useEffect(() => {
    const data = live.data;
    if (!data) return;
    if (!base) {
      setBase({ version: data.version, content: data.content });
      setDraft(data.content);
    } else if (data.version > base.version && (draft === base.content || draft === data.content) && outcome?.kind !== 'stale') {
      setBase({ version: data.version, content: data.content });
      setDraft(data.content);
      setProposal(null);
      editor.current?.setText(data.content);
    }
  }, [live.data, base, draft, outcome]);

  // Keep the edit for the tab while it differs from its base; saved or discarded, there is nothing to keep.
  useEffect(() => {
    if (base && user)
      keepEdit(user.username, set, draft === base.content ? null : { base, draft, proposed: proposal?.text ?? null, proposedId: proposal?.id ?? null });
  }, [user, set, base, draft, proposal]);

  const dirty = base !== null && draft !== base.content;
  // Saved after the version this edit is based on (an older answer, before a refetch, is not).
  const behind = live.data && base && live.data.version > base.version ? live.data : null;
  // The text just proposed waits for review: proposing it again would only repeat the proposal. Once that proposal is
  // rejected or withdrawn (by anyone, anywhere), it waits no more: the list of pending ones says so.
  const asProposed = dirty && proposal !== null && draft === proposal.text;
  const pending = useApi(changesEndpoint, { query: { status_filter: 'pending' } }, { enabled: asProposed && proposal?.id != null });
  // Not from a list read before the proposal (the Proposals page's, cached): only once this one is read again.
  const decided = pending.data !== undefined && !pending.isFetching && proposal?.id != null && !pending.data.changes.some((c) => c.change_id === proposal.id);
  const alreadyProposed = asProposed && !decided;
  // A conflict re-applying the edit left both sides' lines between markers, for the user to settle first.
  const unsettled = dirty && hasConflictMarkers(draft);
  const saveable = dirty && !behind && !alreadyProposed && !unsettled;

  const save = useCallback(async () => {
    // Ctrl+S calls this too: it saves only what the Save button would (it is disabled otherwise).
    if (!base || !saveable || saving) return;
    setSaving(true);
    setOutcome(null);
    try {
      const { data } = await send(eps.put, {
        body: { content: draft, base_version: base.version },
        headers: { 'if-match': ruleSetEtag(base.version) },
      });
      const answer = data as SubmitAnswer;
      setProblems([]);
      if (answer.status === 'ok') {
        setBase({ version: answer.version, content: draft });
        setOutcome({ kind: 'applied', version: answer.version });
        // What it "would" change has happened: the preview is history now.
        dropPreview();
        // Scores, risk and issues follow the new rules: every cached answer is refetched.
        await client.invalidateQueries();
      } else {
        setOutcome({ kind: 'proposed', changeId: answer.change_id, baseVersion: answer.base_version });
        setProposal({ text: draft, id: answer.change_id });
        await invalidatePrefixes(client, ['/api/settings/config-changes']);
      }
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 422) {
        const message = refusalMessage(error.body, error.detail);
        const at = locate(message, draft);
        setProblems([at ?? { line: 1, col: 1, message }]);
        setOutcome({ kind: 'refused', message, at });
      } else if (error instanceof ApiProblem && error.status === 409 && typeof error.body.current_version === 'number') {
        // Someone saved first. Another 409 (the proposer's pending limit) is a plain problem: its detail says what to do.
        const current = error.body.current_version;
        setOutcome({ kind: 'stale', current, base: Number(error.body.base_version ?? base.version), detail: error.detail });
        void live.refetch();
      } else setOutcome({ kind: 'failed', error });
    } finally {
      setSaving(false);
    }
  }, [base, draft, saveable, saving, eps, client, live, dropPreview]);

  // The edit's changes made on the live version, whose own changes stay (a three-way merge, reapply.ts).
  // Based on another version, even the same text is another proposal.
  const rebase = () => {
    if (!behind || !base) return;
    const merged = reapply(base.content, draft, behind.content, behind.version);
    setBase({ version: behind.version, content: behind.content });
    setDraft(merged.text);
    editor.current?.setText(merged.text);
    setProblems(merged.conflicts);
    setProposal(null);
    setOutcome({ kind: 'rebased', version: behind.version, conflicts: merged.conflicts.length });
    setComparing(false);
    dropPreview();
  };
  // The preview of what the text would change (health and risk rules): for the text it was asked for only.
  const impactEp = IMPACT_ENDPOINTS[set];
  const mayPreview = impactEp !== undefined && dirty && !unsettled && !saving;
  const previewImpact = async () => {
    if (!impactEp || !mayPreview || preview?.busy) return;
    const text = draft;
    // Only the last preview asked is shown: an answer overtaken by another preview, a save or a discard is dropped.
    const asked = ++previewAsked.current;
    const current = () => asked === previewAsked.current;
    setPreview({ text, busy: true });
    try {
      const { data } = await send(impactEp, { body: { content: text } });
      if (!current()) return;
      // A valid text: what an earlier preview marked in it is gone.
      if (text === draftNow.current) setProblems([]);
      setPreview({ text, busy: false, impact: data as RuleImpact });
    } catch (error) {
      if (!current()) return;
      if (error instanceof ApiProblem && error.status === 422) {
        const message = refusalMessage(error.body, error.detail);
        const at = locate(message, text);
        // Marked in the editor only while it holds the text refused (a line and column of another text mark nothing).
        if (text === draftNow.current) setProblems([at ?? { line: 1, col: 1, message }]);
        setPreview({ text, busy: false, refused: { message, at } });
      } else setPreview({ text, busy: false, error });
    }
  };
  const discard = (to: Base) => {
    setBase(to);
    setDraft(to.content);
    setProposal(null);
    editor.current?.setText(to.content);
    setProblems([]);
    setOutcome(null);
    setComparing(false);
    dropPreview();
  };

  if (live.isPending) return <Loading what={`the ${RULE_SET_LABEL[set].toLowerCase()}`} />;
  if (live.isError) return <Problem error={live.error} retry={() => void live.refetch()} />;

  const data = live.data;
  return (
    <>
      <p className="muted">{RULE_SET_HELP[set]}</p>
      <dl className="facts rules-facts">
        <dt>Live version</dt>
        <dd>
          {data.version === 0 ? '0 (the shipped default)' : data.version}
          {' · ETag '}
          <code>{data.etag}</code>
        </dd>
        <dt>Last saved</dt>
        <dd>
          {data.updated_at ? (
            <>
              <When iso={data.updated_at} />
              {data.updated_by ? ` by ${data.updated_by}` : ''}
            </>
          ) : (
            'never (shipped default)'
          )}
        </dd>
        <dt>Your edit</dt>
        <dd>
          based on version {base?.version ?? data.version}
          {dirty ? <strong className="rules-dirty"> · unsaved changes</strong> : ' · no changes'}
          {alreadyProposed && ' · proposed as it is, waiting for review: edit it to propose another change'}
          {unsettled && ' · conflict markers left: settle them to save'}
        </dd>
      </dl>

      {behind && (
        <div className="card rules-stale" role={outcome?.kind === 'stale' ? 'alert' : undefined}>
          {outcome?.kind === 'stale' ? (
            <>
              <h2>Not saved: someone saved version {outcome.current} first</h2>
              <p>
                Your edit was based on version {outcome.base}, but version {outcome.current} was saved meanwhile (409 Conflict); nothing was changed. Your text
                is still in the editor. Compare it with version {behind.version}, then re-apply your edit on it and save again, or discard it.
              </p>
            </>
          ) : (
            <>
              <h2>Version {behind.version} is live now</h2>
              <p>
                Your edit is based on version {base?.version}; saving it as it is would be refused. Compare it with version {behind.version}, then re-apply your
                edit on it, or discard it.
              </p>
            </>
          )}
          <div className="rules-actions">
            <button type="button" onClick={() => setComparing((c) => !c)} aria-expanded={comparing}>
              {comparing ? 'Hide the comparison' : `Compare with version ${behind.version}`}
            </button>
            <button type="button" className="primary" onClick={rebase}>
              Re-apply my edit on version {behind.version}
            </button>
            <button type="button" onClick={() => discard({ version: behind.version, content: behind.content })}>
              Discard my edit, load version {behind.version}
            </button>
          </div>
          {comparing && <YamlDiff left={behind.content} right={draft} leftLabel={`Version ${behind.version} (live)`} rightLabel="Your text" />}
        </div>
      )}

      <Result set={set} outcome={outcome} onGoTo={(p) => editor.current?.goTo(p.line, p.col)} />

      <h2 id="rules-editor-title">{RULE_SET_LABEL[set]} YAML</h2>
      <YamlEditor
        ref={editor}
        initial={base ? draft : data.content}
        label={`${RULE_SET_LABEL[set]} YAML`}
        problems={problems}
        onChange={setDraft}
        onSave={() => void save()}
      />
      <div className="rules-actions rules-save">
        <Button type="button" className="primary" onClick={() => void save()} disabled={saving || !saveable}>
          {saving ? 'Saving…' : superadmin ? 'Save and apply' : 'Propose this change'}
        </Button>
        <Button type="button" onClick={() => base && discard(base)} disabled={!dirty || saving}>
          Discard changes
        </Button>
        <Button type="button" onClick={() => setReviewing((r) => !r)} aria-expanded={reviewing && dirty} disabled={!dirty}>
          {reviewing && dirty ? 'Hide my changes' : 'Show my changes'}
        </Button>
        {impactEp && (
          <Button type="button" onClick={() => void previewImpact()} disabled={!mayPreview || preview?.busy}>
            {preview?.busy ? 'Previewing…' : 'Preview impact'}
          </Button>
        )}
        <span className="muted rules-hint">
          {superadmin ? 'Your save applies at once.' : 'Your save becomes a proposal for a superadmin to review.'} Ctrl+S (⌘S) saves from the editor.
        </span>
      </div>
      {reviewing && dirty && base && (
        <YamlDiff left={base.content} right={draft} leftLabel={`Version ${base.version}, which your edit is based on`} rightLabel="Your text" />
      )}
      {preview && (
        <ImpactPreview
          preview={preview}
          current={draft}
          onGoTo={(p) => editor.current?.goTo(p.line, p.col)}
          mayAgain={mayPreview}
          onAgain={() => void previewImpact()}
        />
      )}

      <VersionHistory set={set} onLoad={(text) => editor.current?.setText(text)} />
    </>
  );
}

interface Preview {
  /** The text it was asked for. */
  text: string;
  busy: boolean;
  impact?: RuleImpact;
  refused?: { message: string; at: TextProblem | null };
  /** Anything else that went wrong (shown as the page shows a failed read). */
  error?: unknown;
}

/** The preview under the editor's buttons: what the text it was asked for would change, or why it has none. */
function ImpactPreview({
  preview,
  current,
  mayAgain,
  onGoTo,
  onAgain,
}: {
  preview: Preview;
  current: string;
  /** Whether the text may be previewed (as the Preview impact button): edited, no conflict markers, no save under way. */
  mayAgain: boolean;
  onGoTo(p: TextProblem): void;
  onAgain(): void;
}) {
  const shown = useRef<HTMLHeadingElement>(null);
  // Drawn below the buttons, perhaps below the window's edge: the answer is brought into view, and focus to its
  // heading, as the ticket panel's outcome has it: nothing said it had come to someone who cannot see it appear.
  useEffect(() => {
    if (!preview.busy) shown.current?.focus();
  }, [preview]);
  const changedSince = !preview.busy && preview.text !== current;
  return (
    <section className="rules-preview" aria-labelledby="rules-preview-title" aria-busy={preview.busy}>
      <h2 id="rules-preview-title" tabIndex={-1} ref={shown}>
        Impact of your edit
      </h2>
      {preview.busy ? (
        <Loading what="the impact, scoring the fleet with your text" />
      ) : changedSince ? (
        <p className="notice" role="status">
          The text changed since this preview.{' '}
          <button type="button" onClick={onAgain} disabled={!mayAgain}>
            Preview again
          </button>
        </p>
      ) : preview.refused ? (
        <div className="state problem rules-refused" role="alert">
          <strong>No preview: the rule set is not valid (422)</strong>
          <p>
            {preview.refused.at && !namesPosition(preview.refused.message) ? `Line ${preview.refused.at.line}, column ${preview.refused.at.col}: ` : ''}
            {preview.refused.message}
          </p>
          {preview.refused.at && (
            <button type="button" onClick={() => preview.refused?.at && onGoTo(preview.refused.at)}>
              Go to line {preview.refused.at.line}
            </button>
          )}
        </div>
      ) : preview.impact ? (
        <ImpactView impact={preview.impact} after="With your edit" />
      ) : (
        <Problem error={preview.error} retry={onAgain} />
      )}
    </section>
  );
}

function Result({ set, outcome, onGoTo }: { set: RuleSetKey; outcome: Outcome | null; onGoTo(p: TextProblem): void }) {
  const shown = useRef<HTMLDivElement>(null);
  // Drawn above the editor, and Save sits below it: after a save from the bottom of a long text, the outcome
  // would be out of sight and the click seem to have done nothing.
  useEffect(() => {
    if (outcome) shown.current?.scrollIntoView({ block: 'nearest' });
  }, [outcome]);
  return (
    <div ref={shown}>
      <ResultText set={set} outcome={outcome} onGoTo={onGoTo} />
    </div>
  );
}

function ResultText({ set, outcome, onGoTo }: { set: RuleSetKey; outcome: Outcome | null; onGoTo(p: TextProblem): void }) {
  if (!outcome || outcome.kind === 'stale') return null;
  if (outcome.kind === 'failed') return <Problem error={outcome.error} />;
  if (outcome.kind === 'refused')
    return (
      <div className="state problem rules-refused" role="alert">
        <strong>Not saved: the rule set is not valid (422)</strong>
        <p>
          {outcome.at && !namesPosition(outcome.message) ? (
            <>
              Line {outcome.at.line}, column {outcome.at.col}:{' '}
            </>
          ) : null}
          {outcome.message}
        </p>
        {outcome.at && (
          <button type="button" onClick={() => outcome.at && onGoTo(outcome.at)}>
            Go to line {outcome.at.line}
          </button>
        )}
      </div>
    );
  return (
    <p className="notice rules-outcome" role="status">
      {outcome.kind === 'applied' && (
        <>
          Applied: version {outcome.version} is live. {RULE_SET_APPLIES[set]}
        </>
      )}
      {outcome.kind === 'proposed' && (
        <>
          Proposed: your change (based on version {outcome.baseVersion}) waits for a superadmin's review:{' '}
          <Link to={`/proposals/${encodeURIComponent(outcome.changeId)}`}>proposal {outcome.changeId}</Link>.
        </>
      )}
      {outcome.kind === 'rebased' &&
        (outcome.conflicts === 0 ? (
          <>Your edit is now based on version {outcome.version}, whose own changes are kept. Check it, then save again.</>
        ) : (
          <>
            Your edit is now based on version {outcome.version}, but it and version {outcome.version} change the same lines in {outcome.conflicts}{' '}
            {outcome.conflicts === 1 ? 'place' : 'places'}, marked in the editor: both texts are there between <code>{MINE_MARKER}</code> and{' '}
            <code>&gt;&gt;&gt;&gt;&gt;&gt;&gt; version {outcome.version}</code>. Keep what should stay and remove the markers, then save.
          </>
        ))}
    </p>
  );
}

const PAGE_SIZE = 10;

function VersionHistory({ set, onLoad }: { set: RuleSetKey; onLoad(text: string): void }) {
  const [page, setPage] = useState(1);
  const versions = useApi(RULE_ENDPOINTS[set].versions, { query: { page, page_size: PAGE_SIZE } }, { placeholderData: (previous) => previous });
  const pages = versions.data ? Math.max(1, Math.ceil(versions.data.total / PAGE_SIZE)) : 1;
  return (
    <section aria-labelledby="rules-history-title" className="rules-history">
      <h2 id="rules-history-title">Version history</h2>
      {versions.isPending ? (
        <Loading what="the versions" />
      ) : versions.isError ? (
        <Problem error={versions.error} retry={() => void versions.refetch()} />
      ) : (
        <>
          {versions.data.total === 0 && <Empty>No version has been saved yet: the shipped default (version 0) is in force.</Empty>}
          <ol className="rules-versions">
            {versions.data.versions.map((v) => (
              <VersionCard key={v.version} version={v.version} content={v.content} live={v.version === versions.data.current_version} onLoad={onLoad}>
                <span className="muted">
                  <When iso={v.updated_at} /> by {v.updated_by}
                </span>
                {v.change_id && (
                  <span>
                    from <Link to={`/proposals/${encodeURIComponent(v.change_id)}`}>a proposal</Link>
                    {v.proposed_by ? ` by ${v.proposed_by}` : ''}
                  </span>
                )}
              </VersionCard>
            ))}
            {/* Oldest of all, so on the last page: what going back to the default loads (saved, it becomes the next version). */}
            {page >= pages && (
              <VersionCard version={0} content={versions.data.shipped_default} live={versions.data.current_version === 0} onLoad={onLoad}>
                <span className="muted">the shipped default of this release</span>
              </VersionCard>
            )}
          </ol>
          {pages > 1 && (
            <nav className="rules-actions" aria-label="Version pages">
              <Button type="button" disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
                Newer
              </Button>
              <span>
                Page {page} of {pages}
              </span>
              <Button type="button" disabled={page >= pages} onClick={() => setPage((p) => p + 1)}>
                Older
              </Button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}

/** One version in the history: its number, whether it is live, what `children` say of it, Load, and its text. */
function VersionCard({
  version,
  content,
  live,
  onLoad,
  children,
}: {
  version: number;
  content: string;
  live: boolean;
  onLoad(text: string): void;
  children: ReactNode;
}) {
  return (
    <li className="card">
      <div className="rules-version-head">
        <strong>Version {version}</strong>
        {live && <span className="badge healthy">live</span>}
        {children}
        <button type="button" onClick={() => onLoad(content)}>
          Load version {version} into the editor
        </button>
      </div>
      <details>
        <summary>Show the text of version {version}</summary>
        {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to be scrolled by keyboard */}
        <pre tabIndex={0}>{content}</pre>
      </details>
    </li>
  );
}
