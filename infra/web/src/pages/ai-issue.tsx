// One AI issue (/ai-issues/{id}): how it was grouped (model, or rule-based and
// marked so), the AI summary and reasoning (Markdown, rendered), its facts and its linked alerts;
// admins and superadmins triage it (assignee "me" available). Viewers read only.
import { useParams } from 'react-router';
import { endpoint } from '../api/client';
import { useApiTagged } from '../api/hooks';
import type { Answer } from '../api/types';
import { GroupedBy, isRuleBased } from '../components/ai/grouping';
import { Timeline } from '../components/issues/evidence';
import { TriageForm } from '../components/issues/triage-form';
import { Maybe } from '../components/issues/format';
import { count } from '../components/format';
import { Markdown } from '../components/markdown';
import { IssueFacts, IssueFrame, IssueHeader } from '../components/issues/issue-page';
import { MAY_TRIAGE_AI_ISSUES } from '../api/access';
import { useSession } from '../session';
import './issue.css';
import './ai-issue.css';

const issueEndpoint = endpoint<'ai-issues', 'get'>('GET', '/api/ai-issues/{issue_id}');

type Issue = Answer<'ai-issues', 'get'>['issue'];

export default function AiIssuePage() {
  const { issueId = '' } = useParams();
  const { can } = useSession();
  const detail = useApiTagged(issueEndpoint, { params: { issue_id: issueId } }, { retry: (count, error) => error.status >= 500 && count < 2 });
  const admin = can(...MAY_TRIAGE_AI_ISSUES);

  return (
    <IssueFrame className="issue-page ai-issue-page" back={['/ai-issues', 'AI issues']} title="AI issue" notFound="AI issue not found" detail={detail}>
      {(data) => (
        <>
          <IssueHeader issue={data.issue} badge={<GroupedBy value={data.issue.grouped_by} />} />
          <div className="issue-layout">
            <div className="issue-main">
              <Analysis issue={data.issue} />
              <IssueFacts issue={data.issue} title="Facts" alerts={['Linked alerts', count(data.issue.alert_count)]} />
              <Timeline alerts={data.alerts} total={data.alerts_total} truncated={data.alerts_truncated} />
            </div>
            {admin && (
              // Keyed by the issue: going to another issue (only :issueId changes, the page stays mounted) starts the form afresh.
              <aside key={data.issue.issue_id} className="issue-side" aria-label="Triage">
                <TriageForm group="ai-issues" issue={data.issue} etag={data.etag} refetch={detail.refetch} me />
              </aside>
            )}
          </div>
        </>
      )}
    </IssueFrame>
  );
}

function Analysis({ issue }: { issue: Issue }) {
  const rules = isRuleBased(issue.grouped_by);
  return (
    <section aria-labelledby="analysis-title" className="card ai-issue-analysis">
      <h2 id="analysis-title">{rules ? 'Grouping' : 'AI analysis'}</h2>
      {rules && (
        <p className="notice ai-issue-rules" role="note">
          <strong>Rule-based grouping.</strong> No language model grouped these alerts (none is configured, or its answer could not be used); the rules engine
          did, and wrote the summary and reasoning below.
        </p>
      )}
      <h3>Summary</h3>
      <AiText source={issue.ai_summary} label="AI summary" />
      <h3>Reasoning</h3>
      <AiText source={issue.ai_reasoning} label="AI reasoning" />
      <p className="muted ai-issue-by">Grouped by: {rules ? 'the rules engine' : issue.grouped_by.slice('llm:'.length)}</p>
    </section>
  );
}

/**
 * A grouping's summary or reasoning: a model writes Markdown ("## Summary", "**Disk**"), rendered and sanitised as the
 * patrol's narrative and an investigation's report are (the list shows its first line's words, components/ai/plain-text.ts).
 */
function AiText({ source, label }: { source: string; label: string }) {
  if (!source)
    return (
      <p className="ai-issue-text">
        <Maybe value="" />
      </p>
    );
  return <Markdown source={source} className="ai-issue-markdown" label={label} />;
}
