// The CDN in front of the API (CloudFront on AWS): the ORIGIN_VERIFY_TOKEN secret
// (shared/config/secrets.ts) it sends with every request it forwards, which proves
// that the viewer address it adds is its own and not a caller's (shared/auth/caller.ts).
// Declared by the route groups that write the audit log; locally there is no CDN, the
// secret is unset and the socket's address is the caller's.
import { defineSettings } from './env.js';
import { secret } from './secrets.js';

export const edgeSettings = defineSettings('edge', {}, { secrets: ['ORIGIN_VERIFY_TOKEN'] });

/** The token CloudFront sends, or undefined where none is configured. */
export const originVerifyToken = (): Promise<string | undefined> => secret('ORIGIN_VERIFY_TOKEN');
