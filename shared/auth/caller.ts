// Where a request came from, as recorded in the audit log. Behind CloudFront the
// TCP peer API Gateway reports is an edge server. A CloudFront Function on /api/*
// writes the viewer's own address into X-Viewer-Address, over anything the caller
// sent under that name; but a caller of the API Gateway URL itself could send the
// header too. So it is believed only beside the X-Origin-Verify token the stack has
// CloudFront add to every request it forwards (infra/fleet-health-stack.ts): compared
// in constant time with the ORIGIN_VERIFY_TOKEN secret (the `edge` concern, declared
// by the route groups that audit), read on the first request that carries both.
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { originVerifyToken, previousOriginToken } from '../config/edge.js';
import { onSettingsReset } from '../config/env.js';
import { createLogger, errorFields } from '../log.js';

export interface Caller {
  ip: string;
  userAgent: string;
  /**
   * True when `ip` is a CloudFront edge server's, not the viewer's: CloudFront vouched for the viewer's
   * address but its token could not be read. Many viewers share it, so nothing is limited by it.
   */
  edgeAddress?: boolean;
}

/** The origin header CloudFront adds with the token (lower case, as API Gateway passes headers). */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';
/** The header CloudFront's viewer-request function sets to the viewer's IP address. */
export const VIEWER_ADDRESS_HEADER = 'x-viewer-address';

const log = createLogger('caller');

/**
 * After a failed read of the token, requests record the edge address without reading it again for this
 * long: a Secrets Manager outage does not hold every audited request (a login) for the read's timeout.
 * Tests shorten it.
 */
export const originTokenRetry = { afterMs: 30_000 };
let failedAt: number | undefined;
onSettingsReset(() => {
  failedAt = undefined;
});

interface RequestOrigin {
  sourceIp: string;
  userAgent: string;
  rawHeaders: Readonly<Record<string, string | undefined>>;
}

export async function callerOf(req: RequestOrigin): Promise<Caller> {
  return { ...(await clientAddress(req)), userAgent: req.userAgent };
}

/**
 * The viewer's address when CloudFront vouches for it, else the TCP peer's: an edge server's
 * (`edgeAddress`) when the token to check CloudFront's word by could not be read; the caller's own
 * when it sent no token or a wrong one (a caller of the API Gateway URL).
 */
async function clientAddress({ sourceIp, rawHeaders: headers }: RequestOrigin): Promise<{ ip: string; edgeAddress: boolean }> {
  const own = { ip: sourceIp, edgeAddress: false };
  const offered = headers[ORIGIN_VERIFY_HEADER];
  const viewer = headers[VIEWER_ADDRESS_HEADER];
  if (!offered || !viewer || !isIP(viewer)) return own;
  const edge = { ip: sourceIp, edgeAddress: true };
  if (failedAt !== undefined && Date.now() - failedAt < originTokenRetry.afterMs) return edge;
  let token: string | undefined;
  try {
    token = await originVerifyToken();
    failedAt = undefined;
  } catch (error) {
    // The address is the audit entry's detail, not the request's purpose: the edge's is recorded instead.
    failedAt = Date.now();
    log.warn('origin token unavailable; recording the edge address', errorFields(error));
    return edge;
  }
  if (token && sameToken(offered, token)) return { ip: viewer, edgeAddress: false };
  // Just after a rotation CloudFront may still send the token before it (ORIGIN_TOKEN_OVERLAP_MS).
  const before = token ? await previousOriginToken() : undefined;
  return before && sameToken(offered, before) ? { ip: viewer, edgeAddress: false } : own;
}

const sameToken = (offered: string, token: string) => {
  const a = Buffer.from(offered);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
};
