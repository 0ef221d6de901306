// What a message may quote of another service's words: the services we call (an LLM provider, a proxy in front of
// one) echo what they were sent, and their words reach every role (a chat's 502, a patrol report's error) and the
// logs. Cut out: each secret of ours, whole or in part (a provider's "key canary-KEY-Z..." quotes its start), and
// anything shaped like a credential (SigV4's Credential= and Signature=, AWS key ids, bearer tokens, API keys).

const REDACTED = '[redacted]';

/** Credential shapes, whoever's they are: a proxy quoting a request's Authorization header quotes them all. */
const CREDENTIAL_SHAPES: readonly [RegExp, string][] = [
  [/\b((?:X-Amz-)?(?:Credential|Signature|Security-Token))(=|:\s*)[^\s,;&"'<>]+/gi, `$1$2${REDACTED}`],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // OpenAI's and compatible providers' API keys (sk-…, sk-proj-…, Groq's gsk_…, xAI's xai-…), masked or not.
  [/\b(?:sk|gsk|xai)[-_][A-Za-z0-9_*.-]{4,}/g, REDACTED],
];

/** A run of characters a key may be made of, masking (`*`, `...`) included. */
const TOKEN = /[A-Za-z0-9_+/=*.-]{6,}/g;
/** The shortest piece of a secret that counts as quoting it. */
const PIECE = 6;

/** `text` with `secrets` (whole, JSON- or URL-escaped, or a piece of 6 characters or more) and credential shapes cut out. */
export function redactCredentials(text: string, secrets: readonly (string | undefined)[] = []): string {
  const kept = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  const forms = [...new Set(kept.flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]))];
  // Longest first: a form that holds another is cut whole.
  let safe = forms.sort((a, b) => b.length - a.length).reduce((t, form) => t.split(form).join(REDACTED), text);
  // A masked or cut quote: any run one of whose pieces (between masks) is part of a secret.
  const long = kept.filter((s) => s.length >= PIECE * 2);
  if (long.length)
    safe = safe.replace(TOKEN, (run) =>
      run.split(/\*+|\.{2,}/).some((piece) => piece.length >= PIECE && long.some((s) => s.includes(piece))) ? REDACTED : run,
    );
  return CREDENTIAL_SHAPES.reduce((t, [shape, by]) => t.replace(shape, by), safe);
}
