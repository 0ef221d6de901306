// "Pull now" (admins): POST /api/metric-sources/pull answers 202 at once and the
// pull runs in the background, so after the answer the status is read every two
// seconds until a run started since the click has finished (or 20 s pass; then
// the page's own 30 s refresh takes over). The button waits meanwhile.
import { useEffect, useId, useState } from 'react';
import { useApi, useApiMutation } from '../../api/hooks';
import { Problem } from '../states';
import { pullEndpoint, statusEndpoint } from './api';
import { count, durationMs } from './format';
import { Button } from '../button';

const POLL_MS = 2_000;
const FOLLOW_MS = 20_000;

interface Follow {
  /** The last run's end when the pull was started: a different one is the new run. */
  before: string | null;
  since: number;
  /** When the service was asked for the pull, by its own clock: a run started before it (a scheduled one) is not its result. */
  asked: string;
}

export function PullNow({ enabled }: { enabled: boolean }) {
  const id = useId();
  const pull = useApiMutation(pullEndpoint, ['/api/metric-sources/status']);
  const [follow, setFollow] = useState<Follow | null>(null);
  const [timedOut, setTimedOut] = useState(false);
  // Shares the page's status query; this observer adds the quick polling while a pull is followed.
  const status = useApi(statusEndpoint, {}, { refetchInterval: follow ? POLL_MS : false, refetchIntervalInBackground: true });
  const run = status.data?.last_run ?? null;
  const [result, setResult] = useState<typeof run>(null);

  useEffect(() => {
    if (!follow) return;
    if (run && run.finished_at !== follow.before && run.started_at >= follow.asked) {
      setResult(run);
      setFollow(null);
      return;
    }
    const timer = setTimeout(
      () => {
        setFollow(null);
        setTimedOut(true);
      },
      Math.max(0, follow.since + FOLLOW_MS - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [follow, run]);

  const start = () => {
    const before = run?.finished_at ?? null;
    setResult(null);
    setTimedOut(false);
    // A run already going (none started): it is the one followed, whatever its start.
    pull.mutate({}, { onSuccess: (answer) => setFollow({ before, since: Date.now(), asked: answer.status === 'started' ? answer.requested_at : '' }) });
  };

  return (
    <section className="card ms-pull" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Pull now</h2>
      <p className="muted">
        Runs the puller now instead of waiting for its schedule. It runs in the background; this page follows it.
        {!enabled && ' While the source is disabled, a pull reads nothing and its run is recorded as disabled.'}
      </p>
      {/* Not again while one is followed: a second pull finds the first's lock, records nothing and only confuses the result. */}
      <Button type="button" className="primary" onClick={start} disabled={pull.isPending || follow !== null} aria-describedby={`${id}-status`}>
        {pull.isPending ? 'Starting…' : follow ? 'Pulling…' : 'Pull now'}
      </Button>
      <div id={`${id}-status`} className="ms-pull-status" role="status" aria-live="polite">
        {pull.isPending && <p>Starting a pull…</p>}
        {pull.isSuccess && (
          <div className="notice">
            <p>
              <strong>{pull.data.status === 'started' ? 'Pull started.' : 'A pull is already running.'}</strong> {pull.data.message}
            </p>
            {follow && (
              <p className="muted">
                Following it: the status below is read every {POLL_MS / 1000} s.
                <progress className="ms-progress" aria-label="Pull in progress" />
              </p>
            )}
            {result && (
              <p>
                Finished: <strong>{result.outcome}</strong>, {count(result.accepted)} accepted, {count(result.refused)} refused in{' '}
                {durationMs(result.duration_ms)}.
              </p>
            )}
            {timedOut && !result && (
              <p className="muted">Not finished after {FOLLOW_MS / 1000} s; it goes on in the background, and this page refreshes every 30 s.</p>
            )}
          </div>
        )}
      </div>
      {pull.isError && <Problem error={pull.error} retry={start} />}
    </section>
  );
}
