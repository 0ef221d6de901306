// Why the assistant did not answer, in place in the conversation: 503 (no
// provider configured: the service's detail names the settings; with
// Retry-After, a passing refusal to send again), 429 (the
// per-user rate limit: when to send again, from Retry-After; the person's daily
// budget, until 00:00 UTC; or another of their messages still being answered, from
// another tab), 502 (the model
// failed) and anything else with the service's own detail.
import { useEffect, useState } from 'react';
import { utc, utcTime } from '../time';
import type { Turn } from './turns';
import { Button } from '../button';

type ProblemTurn = Extract<Turn, { kind: 'problem' }>;

/** Where the language model's settings are made: said wherever the console says the assistant cannot answer. */
export function SettingsNote() {
  return (
    <p className="muted">
      These are settings of the service, not of the console: whoever runs it sets them (locally in the environment of <code>npm start</code>, on AWS in the
      stack's configuration) and restarts it. Everything else in the console works without them.
    </p>
  );
}

/** The refusal of a service with no language model set up. A 503 with Retry-After is a passing refusal (throttling, a secret not read just now), not a missing setting. */
export const notSetUp = (turn: ProblemTurn): boolean => turn.status === 503 && turn.retryAfter == null;

/**
 * Why a message was not answered. `again`: the same "not set up" was explained since the last answer, so it is said in
 * one line (each message sent meanwhile added the whole explanation again).
 */
export function Explanation({ turn, onRetry, busy, again = false }: { turn: ProblemTurn; onRetry?: () => void; busy: boolean; again?: boolean }) {
  if (notSetUp(turn) && again) {
    return (
      <div className="chat-problem">
        <p>Not answered: the language model is still not set up, as said above.</p>
        {onRetry && (
          <Button type="button" onClick={onRetry} disabled={busy}>
            Try again
          </Button>
        )}
      </div>
    );
  }
  if (notSetUp(turn)) {
    return (
      <div className="chat-problem">
        <h3>The assistant is not available: its language model is not set up</h3>
        <p>{turn.detail}</p>
        <SettingsNote />
        {onRetry && (
          <Button type="button" onClick={onRetry} disabled={busy}>
            Try again
          </Button>
        )}
      </div>
    );
  }
  if (turn.status === 429) return <RateLimited turn={turn} onRetry={onRetry} busy={busy} />;
  return (
    <div className="chat-problem">
      <h3>{heading(turn)}</h3>
      <p>{turn.detail}</p>
      {onRetry && (
        <Button type="button" onClick={onRetry} disabled={busy}>
          Send again
        </Button>
      )}
    </div>
  );
}

function heading(turn: ProblemTurn): string {
  if (turn.status === 0) return 'The service did not answer';
  if (turn.status === 502) return 'The language model failed to answer';
  if (turn.status === 504) return 'The answer took too long';
  if (turn.status === 503) return 'The service is busy for a moment';
  return `${turn.title} (${turn.status})`;
}

function RateLimited({ turn, onRetry, busy }: { turn: ProblemTurn; onRetry?: () => void; busy: boolean }) {
  const wait = turn.retryAfter ?? 60;
  const until = turn.at + wait * 1000;
  const [now, setNow] = useState(() => Date.now());
  const left = Math.max(0, Math.ceil((until - now) / 1000));
  useEffect(() => {
    if (left <= 0) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [left]);
  const at = new Date(until);
  if (turn.limit === 'daily_budget') {
    return (
      <div className="chat-problem">
        <h3>Your chat budget for today is used up</h3>
        <p>{turn.detail}</p>
        <p className="muted">
          The service caps what each person's chat messages may cost a day (its <code>CHAT_DAILY_BUDGET_USD</code> setting). You can send again after{' '}
          <time dateTime={at.toISOString()}>{utc(at)}</time>; everything else in the console works meanwhile.
        </p>
      </div>
    );
  }
  if (turn.limit === 'one_at_a_time') {
    // The other message ends when its answer comes, usually well before the claim's Retry-After: sending again is not held back.
    return (
      <div className="chat-problem">
        <h3>Another of your messages is still being answered</h3>
        <p>{turn.detail}</p>
        <p className="muted">
          That message is done by <time dateTime={at.toISOString()}>{utcTime(at, { seconds: true })}</time> at the latest. Your message above was not answered
          and cost nothing.
        </p>
        {onRetry && (
          <Button type="button" onClick={onRetry} disabled={busy}>
            Send again
          </Button>
        )}
      </div>
    );
  }
  return (
    <div className="chat-problem">
      <h3>Too many messages: wait a moment</h3>
      <p>{turn.detail}</p>
      <p>
        The assistant takes at most 20 messages a minute from each person.{' '}
        {turn.retryAfter === null ? 'The service did not say when; try ' : 'You can send again '}
        after <time dateTime={at.toISOString()}>{utcTime(at, { seconds: true })}</time>
        {left > 0 && <span aria-hidden="true"> (in {left} s)</span>}. Your message above was not answered; “Send again” sends it once the wait is over.
      </p>
      {onRetry && (
        <Button type="button" onClick={onRetry} disabled={busy || left > 0}>
          Send again{left > 0 && <span aria-hidden="true"> ({left} s)</span>}
        </Button>
      )}
    </div>
  );
}
