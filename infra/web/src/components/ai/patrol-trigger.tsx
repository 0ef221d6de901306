// The patrol trigger (admins and superadmins): POST /api/patrol/trigger and every
// answer it can give. `completed` and `failed` (with its reason) are final;
// 202 `running` and `already_running` (when it names the scan) are followed by
// polling that report until it ends, with the elapsed time and its figures shown.
// When a scan ends, the patrol lists, KPIs and latest report are read again.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { ItemLink } from '../list-link';
import { type ApiProblem, endpoint, send } from '../../api/client';
import { invalidatePrefixes, useApi } from '../../api/hooks';
import type { Answer } from '../../api/types';
import { Problem } from '../states';
import { count, seconds } from '../format';
import { modelLabel } from './patrol-report';
import './ai.css';
import { Button } from '../button';

const triggerEndpoint = endpoint<'patrol', 'trigger'>('POST', '/api/patrol/trigger');
const reportEndpoint = endpoint<'patrol', 'get'>('GET', '/api/patrol/{report_id}');

type TriggerAnswer = Answer<'patrol', 'trigger'>;

type State =
  | { step: 'idle' }
  | { step: 'sending' }
  | { step: 'polling'; reportId: string; since: number; joined: boolean }
  | { step: 'done'; answer: TriggerAnswer }
  | { step: 'error'; error: ApiProblem | Error; lost?: string };

const POLL_MS = 1500;

export function PatrolTrigger() {
  const id = useId();
  const client = useQueryClient();
  const [state, setState] = useState<State>({ step: 'idle' });
  const refreshPatrol = () => invalidatePrefixes(client, ['/api/patrol']);

  async function trigger() {
    setState({ step: 'sending' });
    try {
      const { data } = await send(triggerEndpoint, { body: { report_type: 'on_demand' } });
      const answer = data as TriggerAnswer;
      if (answer.status === 'running') setState({ step: 'polling', reportId: answer.report_id, since: Date.now(), joined: false });
      else if (answer.status === 'already_running' && answer.report_id)
        setState({ step: 'polling', reportId: answer.report_id, since: Date.now(), joined: true });
      else setState({ step: 'done', answer });
      if (answer.status !== 'running' && answer.status !== 'already_running') void refreshPatrol();
    } catch (error) {
      setState({ step: 'error', error: error as Error });
    }
  }

  const busy = state.step === 'sending' || state.step === 'polling';
  return (
    <section className="card patrol-trigger" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Run a patrol scan</h2>
      <p className="muted patrol-trigger-help">
        Scans the whole fleet now and writes a report (the language model when one is configured, the rules engine otherwise). One scan runs at a time.
      </p>
      <Button type="button" className="primary" onClick={() => void trigger()} disabled={busy} aria-describedby={`${id}-status`}>
        {state.step === 'sending' ? 'Starting…' : state.step === 'polling' ? 'Scan running…' : 'Trigger patrol'}
      </Button>
      <div id={`${id}-status`} className="patrol-trigger-status" role="status" aria-live="polite">
        {state.step === 'sending' && <p>Starting the scan and waiting for it…</p>}
        {state.step === 'polling' && (
          <Polling
            key={state.reportId}
            reportId={state.reportId}
            since={state.since}
            joined={state.joined}
            onLost={(error) => setState({ step: 'error', error, lost: state.reportId })}
            onEnd={(report) => {
              void refreshPatrol();
              setState({
                step: 'done',
                answer:
                  report.status === 'completed'
                    ? {
                        status: 'completed',
                        report_id: report.report_id,
                        tool_rounds: report.tool_rounds,
                        total_tokens: report.total_tokens,
                        duration_seconds: report.duration_seconds,
                        message: `Patrol (${modelLabel(report.model)}) flagged ${count(report.flagged_count)} cluster${report.flagged_count === 1 ? '' : 's'}.`,
                      }
                    : { status: 'failed', report_id: report.report_id, message: report.error ?? 'the scan failed' },
              });
            }}
          />
        )}
        {state.step === 'done' && <Outcome answer={state.answer} />}
      </div>
      {state.step === 'error' && (
        <Problem error={state.error} retry={() => void trigger()}>
          {state.lost && (
            <p>
              The scan's report {state.lost} could not be read, so it is no longer followed here; it may still be running. Trigger patrol asks for a scan again
              (one runs at a time).
            </p>
          )}
        </Problem>
      )}
    </section>
  );
}

/**
 * A refusal of the report's read (4xx but 429: a 404 for a report that is gone or was never written, a 403) is
 * answered the same every time: following stops and the problem is shown, the trigger enabled again. It kept
 * saying "Waiting … s" for good, the button disabled. A passing failure (5xx, 429, no answer) is retried, said so.
 */
const refused = (error: ApiProblem) => error.status >= 400 && error.status < 500 && error.status !== 429;

function Polling({
  reportId,
  since,
  joined,
  onEnd,
  onLost,
}: {
  reportId: string;
  since: number;
  joined: boolean;
  onEnd: (report: Answer<'patrol', 'get'>) => void;
  onLost: (error: ApiProblem) => void;
}) {
  const [now, setNow] = useState(Date.now());
  const report = useApi(
    reportEndpoint,
    { params: { report_id: reportId } },
    {
      refetchInterval: (q) => ((q.state.data && q.state.data.status !== 'running') || (q.state.error && refused(q.state.error)) ? false : POLL_MS),
      refetchIntervalInBackground: true,
    },
  );
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const data = report.data;
  useEffect(() => {
    if (data && data.status !== 'running') onEnd(data);
  }, [data, onEnd]);
  const error = report.error;
  useEffect(() => {
    if (error && refused(error)) onLost(error);
  }, [error, onLost]);
  const elapsed = Math.max(0, Math.round((now - since) / 1000));
  const started = data ? Math.max(0, Math.round((now - Date.parse(data.created_at)) / 1000)) : null;
  return (
    <div className="patrol-progress">
      <p>
        {joined ? 'A scan was already running; following it. ' : 'The scan is running in the background. '}
        {/* Inside the trigger's live region: the figures change every second, and only the start and the end are announced. */}
        <span aria-hidden="true">
          {/* No tool rounds or tokens: a report has them only once it ends, and "0 so far" was no progress. */}
          {started !== null ? `Running for ${started} s` : `Waiting ${elapsed} s`}.
        </span>
      </p>
      <progress aria-label="Patrol scan progress" />
      <p className="muted">
        Report <ItemLink to={`/patrol/${encodeURIComponent(reportId)}`}>{reportId}</ItemLink>
      </p>
      {report.isError && !refused(report.error) && <p className="error">Checking the report failed ({report.error.detail}); retrying.</p>}
    </div>
  );
}

function Outcome({ answer }: { answer: TriggerAnswer }) {
  switch (answer.status) {
    case 'completed':
      return (
        <div className="notice patrol-outcome completed">
          <p>
            <strong>Scan completed.</strong> {answer.message} ({seconds(answer.duration_seconds)}, {count(answer.tool_rounds)} tool round
            {answer.tool_rounds === 1 ? '' : 's'}, {count(answer.total_tokens)} tokens)
          </p>
          <p>
            <ItemLink to={`/patrol/${encodeURIComponent(answer.report_id)}`}>Open the report</ItemLink>
          </p>
        </div>
      );
    case 'failed':
      return (
        <div className="state problem patrol-outcome failed">
          <strong>The scan failed.</strong>
          <p>Reason: {answer.message}</p>
          <p>
            <ItemLink to={`/patrol/${encodeURIComponent(answer.report_id)}`}>Open the failed report</ItemLink>
          </p>
        </div>
      );
    case 'already_running':
      return (
        <div className="notice patrol-outcome already">
          <p>
            <strong>A scan is already running.</strong> Only one runs at a time; its report joins the list below once it ends (it is not followed here). Try
            again later to start another.
          </p>
        </div>
      );
    default:
      return null;
  }
}
