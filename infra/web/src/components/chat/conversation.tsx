// The conversation: an aria-live log (new turns are announced, the history is
// not re-read), scrolled to the newest turn, reachable by keyboard (it scrolls).
import { useEffect, useMemo, useRef, useState } from 'react';
import { Explanation, notSetUp } from './explain';
import { Reply } from './reply';
import { answeredIn, type Turn } from './turns';

export function Conversation({
  turns,
  pending,
  onRetry,
}: {
  turns: Turn[];
  /** The message waiting for its answer, if any. */
  pending: boolean;
  /** Sends the message a problem turn answered again. */
  onRetry: (problemId: string) => void;
}) {
  const end = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll whenever a turn is added or the wait starts or ends
  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [turns.length, pending]);
  const lastProblem = turns.at(-1)?.kind === 'problem' ? turns.at(-1)?.id : undefined;
  const explainedAgain = useMemo(() => {
    // The same refusal explained since the last answer: its text too (a setting made meanwhile may say what is still missing).
    const again = new Set<string>();
    let explained: string | null = null;
    for (const turn of turns) {
      if (turn.kind === 'assistant') explained = null;
      else if (turn.kind === 'problem' && notSetUp(turn)) {
        if (explained === turn.detail) again.add(turn.id);
        explained = turn.detail;
      }
    }
    return again;
  }, [turns]);

  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the log scrolls, so keyboard users must be able to reach it
    <div className="chat-log" role="log" aria-live="polite" aria-label="Conversation" tabIndex={0}>
      {turns.length === 0 && !pending && (
        <p className="chat-empty muted">
          Ask about the fleet: which clusters are at risk, why a cluster's score dropped, what its logs say, what the runbook recommends. The assistant answers
          from the fleet's data with its tools (SQL over the fleet, cluster details, log analysis, the runbooks).
        </p>
      )}
      {turns.map((turn) => (
        <TurnView
          key={turn.id}
          turn={turn}
          busy={pending}
          again={explainedAgain.has(turn.id)}
          onRetry={turn.id === lastProblem ? () => onRetry(turn.id) : undefined}
        />
      ))}
      {pending && <Waiting />}
      <div ref={end} />
    </div>
  );
}

function TurnView({ turn, busy, again, onRetry }: { turn: Turn; busy: boolean; again: boolean; onRetry?: () => void }) {
  if (turn.kind === 'user') {
    return (
      <article className="chat-turn chat-user">
        <h2 className="chat-who">You</h2>
        <div className="chat-bubble chat-plain">{turn.text}</div>
      </article>
    );
  }
  if (turn.kind === 'assistant') {
    return (
      <article className="chat-turn chat-assistant">
        <h2 className="chat-who">Assistant</h2>
        <div className="chat-bubble">
          <Reply markdown={turn.text} />
        </div>
        <p className="chat-meta muted">
          <span className="chat-tools">{turn.toolCalls === 0 ? 'no tool calls' : turn.toolCalls === 1 ? '1 tool call' : `${turn.toolCalls} tool calls`}</span> ·{' '}
          <span className="chat-duration">answered in {answeredIn(turn.durationMs)}</span>
        </p>
      </article>
    );
  }
  return (
    <article className={`chat-turn chat-assistant chat-failed status-${turn.status}`}>
      <h2 className="chat-who">Assistant</h2>
      <div className="chat-bubble">
        <Explanation turn={turn} onRetry={onRetry} busy={busy} again={again} />
      </div>
    </article>
  );
}

/** While the answer is on its way: the assistant may run tools for up to half a minute. */
function Waiting() {
  const [started] = useState(() => Date.now());
  const [now, setNow] = useState(started);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const elapsed = Math.floor((now - started) / 1000);
  return (
    <p className="chat-turn chat-waiting muted">
      The assistant is working (it may query the fleet and run tools; up to half a minute)…
      {elapsed > 0 && <span aria-hidden="true"> {elapsed} s</span>}
    </p>
  );
}
