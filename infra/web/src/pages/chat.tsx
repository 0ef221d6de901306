// The assistant (/chat): a conversation over POST /api/chat/message. The user's
// messages and the assistant's Markdown replies (sanitised), how many tool
// calls each answer took and how long; reset (POST /api/chat/reset) clears the
// service's history and the view, once confirmed when there is a conversation to lose. A 503 (no provider configured) and a 429
// (rate limit, with Retry-After) are explained where the answer would be; that no
// model is configured is also said on opening the page (GET /api/chat/status), before
// anyone types a question. Sending stays open: the settings are read per message.
import { useIsMutating, useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { type ApiProblem, call, endpoint } from '../api/client';
import { useApi } from '../api/hooks';
import { Composer } from '../components/chat/composer';
import { Conversation } from '../components/chat/conversation';
import { SettingsNote } from '../components/chat/explain';
import { prepareReplies } from '../components/chat/reply';
import { problemTurn, turnId, updateTurns, useTurns } from '../components/chat/turns';
import { Problem } from '../components/states';
import { sessionId, useSession } from '../session';
import './chat.css';
import { Button } from '../components/button';

const messageEndpoint = endpoint<'chat', 'message'>('POST', '/api/chat/message');
const resetEndpoint = endpoint<'chat', 'reset'>('POST', '/api/chat/reset');
const statusEndpoint = endpoint<'chat', 'status'>('GET', '/api/chat/status');

export default function ChatPage() {
  const { user } = useSession();
  const owner = user?.username ?? '';
  const turns = useTurns(owner);
  const [draft, setDraft] = useState('');
  const [notice, setNotice] = useState('');
  const input = useRef<HTMLTextAreaElement>(null);
  // "New conversation" asks first when there is one to lose: the service forgets it too, and nothing brings it back.
  const [confirming, setConfirming] = useState(false);
  const newButton = useRef<HTMLButtonElement>(null);
  const discardButton = useRef<HTMLButtonElement>(null);
  const keptBack = useRef(false);
  useEffect(() => {
    if (confirming) discardButton.current?.focus();
    else if (keptBack.current) newButton.current?.focus();
    keptBack.current = false;
  }, [confirming]);
  const keep = () => {
    keptBack.current = true;
    setConfirming(false);
  };
  const status = useApi(statusEndpoint);

  useEffect(() => void prepareReplies(), []);

  // An answer may arrive after the user left the page (it can take 30 s): the mutation outlives the page in the
  // query client, keeps its answer in the stored conversation, and a page shown meanwhile sees it under way.
  const messageKey = ['chat-message', owner];
  const message = useMutation({
    mutationKey: messageKey,
    // the renderer is loaded alongside, so the reply is shown rendered from the start
    mutationFn: async (text: string) => (await Promise.all([call(messageEndpoint, { body: { message: text } }), prepareReplies()]))[0],
    // An answer that arrives once the session that asked has ended (signed out, someone else signed in) is not
    // kept: signing out emptied the tab, and a transcript written after it would outlive the session.
    onMutate: () => sessionId(),
    onSuccess: (answer, _text, askedIn) => {
      if (askedIn !== sessionId()) return;
      updateTurns(owner, (all) => [
        ...all,
        { id: turnId(), kind: 'assistant', text: answer.reply, toolCalls: answer.tool_calls, durationMs: answer.duration_ms, at: Date.now() },
      ]);
    },
    onError: (error, _text, askedIn) => {
      if (askedIn !== sessionId()) return;
      updateTurns(owner, (all) => [...all, problemTurn(error)]);
    },
  });
  const answering = useIsMutating({ mutationKey: messageKey }) > 0;

  const reset = useMutation<Awaited<ReturnType<typeof call<'chat', 'reset'>>>, ApiProblem>({
    mutationFn: () => call(resetEndpoint),
    // The question stays, its button busy and focused, until the answer: then focus goes to the message box, or
    // back to "New conversation" beside the failure.
    onSettled: () => setConfirming(false),
    onError: () => {
      keptBack.current = true;
    },
    onSuccess: (answer) => {
      updateTurns(owner, () => []);
      setDraft('');
      message.reset();
      setNotice(answer.message);
      input.current?.focus();
    },
  });

  const send = () => {
    const text = draft.trim();
    if (!text || answering) return;
    setNotice('');
    updateTurns(owner, (all) => [...all, { id: turnId(), kind: 'user', text, at: Date.now() }]);
    setDraft('');
    message.mutate(text);
    input.current?.focus();
  };

  /** Sends again the message a failed answer belonged to, in place of that failure. */
  const retry = (problemId: string) => {
    const at = turns.findIndex((t) => t.id === problemId);
    const asked = turns.slice(0, at).findLast((t) => t.kind === 'user');
    if (at < 0 || !asked || answering) return;
    updateTurns(owner, (all) => all.filter((t) => t.id !== problemId));
    message.mutate(asked.text);
  };

  const busy = answering || reset.isPending;
  return (
    <section className="chat-page" aria-labelledby="chat-title">
      <header className="chat-header">
        <div>
          <h1 id="chat-title">Assistant</h1>
          <p className="muted chat-intro">Answers from the fleet's data. It remembers this conversation until you start a new one.</p>
        </div>
        {confirming ? (
          // Escape keeps the conversation, as "Keep it" does (focus returns to "New conversation").
          // biome-ignore lint/a11y/noStaticElementInteractions: the keys are its buttons'; the span only hears Escape from them
          <span
            className="chat-confirm"
            onKeyDown={(e) => {
              if (e.key !== 'Escape') return;
              e.preventDefault();
              keep();
            }}
          >
            <span>Discard this conversation? The assistant forgets it too.</span>
            <Button ref={discardButton} type="button" className="danger" onClick={() => reset.mutate()} disabled={busy}>
              Discard conversation
            </Button>
            <button type="button" onClick={keep}>
              Keep it
            </button>
          </span>
        ) : (
          <Button ref={newButton} type="button" onClick={() => (turns.length > 0 ? setConfirming(true) : reset.mutate())} disabled={busy}>
            New conversation
          </Button>
        )}
      </header>
      <p className="chat-notice muted" role="status">
        {notice}
      </p>
      {status.data?.available === false && (
        <div className="state empty chat-unavailable">
          <h2>The assistant cannot answer: its language model is not set up</h2>
          <p>{status.data.detail}</p>
          <SettingsNote />
        </div>
      )}
      {reset.isError && <Problem error={reset.error} retry={() => reset.mutate()} />}
      <Conversation turns={turns} pending={answering} onRetry={retry} />
      <Composer value={draft} onChange={setDraft} onSend={send} busy={busy} inputRef={input} />
    </section>
  );
}
