// What a message may quote of another service's words: the services we call (an LLM provider, a proxy in front of
// one, Prometheus) echo what they were sent, and their words reach every role (a chat's 502, a patrol report's error)
// and the logs. Cut out: each secret of ours, whole or in part (a provider's "key canary-KEY-Z..." quotes its start),
// and what is shaped like a credential (SigV4's Credential= and Signature=, a session token, AWS key ids, bearer and
// basic tokens, API keys). Ordinary words that name these things ("basic authentication required") stay.

const REDACTED = '[redacted]';

/** A token's characters (base64, base64url, JWT). */
const T = '[A-Za-z0-9._~+/=-]';
/** Credential shapes, whoever's they are: a proxy quoting a request's Authorization header quotes them all. */
const CREDENTIAL_SHAPES: readonly [RegExp, string][] = [
  // SigV4's Authorization header and presigned URLs, as sent (case matters there: "signature: mismatch" is a sentence).
  [/\b(Credential|Signature)=[^\s,;&"'<>]+/g, `$1=${REDACTED}`],
  // Its headers and query parameters by name, quoted as a header (`X-Amz-Security-Token: …`), a parameter or JSON.
  [/\b(X-Amz-(?:Credential|Signature|Security-Token))(["']?\s*[=:]\s*["']?)[^\s,;&"'<>]+/gi, `$1$2${REDACTED}`],
  // STS session tokens by their start, wherever they are quoted.
  [/\b(?:IQoJb3JpZ2lu|FwoGZXIvYXdz)[A-Za-z0-9+/=]{16,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, REDACTED],
  // A token after Bearer or Basic: one with a digit, a sign of base64 or both cases, not a word ("Bearer authentication").
  // (Case-sensitive, so that "both cases" means what it says.)
  [new RegExp(`\\b([Bb]earer|[Bb]asic|BEARER|BASIC)\\s+(?=${T}*(?:[0-9+/=_-]|[a-z]${T}*[A-Z]|[A-Z]${T}*[a-z]))${T}{8,}`, 'g'), `$1 ${REDACTED}`],
  // OpenAI's and compatible providers' API keys (sk-…, sk-proj-…, Groq's gsk_…, xAI's xai-…), masked or not.
  [/\b(?:sk|gsk|xai)[-_][A-Za-z0-9_*.-]{16,}/g, REDACTED],
];

/** A run of characters a key may be made of, masking (`*`, `...`) included. */
const TOKEN = /[A-Za-z0-9_+/=*.-]{8,}/g;
/** The shortest piece of a secret that counts as quoting it. */
const PIECE = 8;
/**
 * The most of a text looked at: callers quote a few hundred characters of it, and a regular expression over megabytes
 * of one unbroken run overflowed the stack (a 400 with a 7 MB message became a "connection failed", retried).
 */
const TEXT_MAX = 64 * 1024;

/** `text` with `secrets` (whole, JSON- or URL-escaped, or a piece of 8 characters or more) and credential shapes cut out. */
export function redactCredentials(text: string, secrets: readonly (string | undefined)[] = []): string {
  const kept = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  const forms = [...new Set(kept.flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]))];
  // Longest first: a form that holds another is cut whole. The look is bounded past the longest form, so no secret
  // straddles its end unseen.
  const longestForm = forms.reduce((n, f) => Math.max(n, f.length), 0);
  let safe = forms.sort((a, b) => b.length - a.length).reduce((t, form) => t.split(form).join(REDACTED), text.slice(0, TEXT_MAX + longestForm));
  safe = safe.slice(0, TEXT_MAX);
  // A masked or cut quote: any run one of whose pieces (between masks) is part of a secret.
  const long = kept.filter((s) => s.length >= PIECE * 2);
  if (long.length)
    safe = safe.replace(TOKEN, (run) =>
      run.split(/\*+|\.{2,}/).some((piece) => piece.length >= PIECE && long.some((s) => s.includes(piece))) ? REDACTED : run,
    );
  return CREDENTIAL_SHAPES.reduce((t, [shape, by]) => t.replace(shape, by), safe);
}
