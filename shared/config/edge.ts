// The CDN in front of the API (CloudFront on AWS): the ORIGIN_VERIFY_TOKEN secret
// (shared/config/secrets.ts) it sends with every request it forwards, which proves
// that the viewer address it adds is its own and not a caller's (shared/auth/caller.ts).
// Declared by the route groups that write the audit log; locally there is no CDN, the
// secret is unset and the socket's address is the caller's.
import { defineSettings, onSettingsReset, processEnv } from './env.js';
import { secret, secretVersionAt, SECRET_MAX_AGE_MS } from './secrets.js';
import { createLogger, errorFields } from '../log.js';

export const edgeSettings = defineSettings('edge', () => ({}), { secrets: ['ORIGIN_VERIFY_TOKEN'] });

/** The token CloudFront sends, or undefined where none is configured. */
export const originVerifyToken = (): Promise<string | undefined> => secret('ORIGIN_VERIFY_TOKEN');

/**
 * How long after a rotation the token before it is still CloudFront's. A rotation is put-secret-value, then a
 * deploy that pins CloudFront to the new version (infra/README.md); until that reaches every edge, CloudFront
 * sends the old token, and a request refused as not CloudFront's would be charged to the edge's address
 * (the per-address login limit of everyone behind it). Bounded, so a token rotated because it leaked is dropped.
 */
export const ORIGIN_TOKEN_OVERLAP_MS = 3_600_000;

let previous: { value: Promise<string | undefined>; readAt: number } | undefined;
onSettingsReset(() => (previous = undefined));

/**
 * The token before the current one, while the current one is younger than ORIGIN_TOKEN_OVERLAP_MS (else, or where
 * the secret is a variable, undefined). Read only for a token that is not the current one, at most once a minute.
 */
export function previousOriginToken(): Promise<string | undefined> {
  const arn = processEnv().ORIGIN_VERIFY_TOKEN_ARN?.trim();
  if (!arn) return Promise.resolve(undefined);
  if (previous && Date.now() - previous.readAt < SECRET_MAX_AGE_MS) return previous.value;
  const value = (async () => {
    const current = await secretVersionAt(arn, 'AWSCURRENT', AbortSignal.timeout(5_000));
    if (current.createdAt === undefined || Date.now() - current.createdAt >= ORIGIN_TOKEN_OVERLAP_MS) return undefined;
    return (await secretVersionAt(arn, 'AWSPREVIOUS', AbortSignal.timeout(5_000))).value;
  })().catch((error: unknown) => {
    // None before it (a secret never rotated has no AWSPREVIOUS), or unreadable: only the current token is CloudFront's.
    createLogger('config/edge').warn('previous origin token not read', errorFields(error));
    return undefined;
  });
  previous = { value, readAt: Date.now() };
  return value;
}
