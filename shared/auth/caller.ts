// Where a request came from, as recorded in the audit log. Behind CloudFront the
// TCP peer API Gateway reports is an edge server; the viewer's own address comes in
// CloudFront's CloudFront-Viewer-Address header, which any direct caller of the API
// could also send. So it is believed only beside the X-Origin-Verify token that the
// stack has CloudFront add to every request it forwards (infra/config-bindings.ts,
// originVerifySecret): compared in constant time with the ORIGIN_VERIFY_TOKEN secret,
// which is read on the first request that carries the header and needs an address.
// The route groups that audit declare the `edge` concern, which brings them the secret.
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { originVerifyToken } from '../config/edge.js';
import { createLogger, errorFields } from '../log.js';

export interface Caller {
  ip: string;
  userAgent: string;
}

/** The origin header CloudFront adds with the token (lower case, as API Gateway passes headers). */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';
const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';

const log = createLogger('caller');

interface RequestOrigin {
  sourceIp: string;
  userAgent: string;
  headers: Readonly<Record<string, string | undefined>>;
}

export async function callerOf(req: RequestOrigin): Promise<Caller> {
  return { ip: await clientAddress(req), userAgent: req.userAgent };
}

/** The viewer's address when CloudFront vouches for it, else the TCP peer's. */
async function clientAddress({ sourceIp, headers }: RequestOrigin): Promise<string> {
  const offered = headers[ORIGIN_VERIFY_HEADER];
  const viewer = viewerIp(headers[VIEWER_ADDRESS_HEADER]);
  if (!offered || !viewer) return sourceIp;
  let token: string | undefined;
  try {
    token = await originVerifyToken();
  } catch (error) {
    // The address is the audit entry's detail, not the request's purpose: the edge's is recorded instead.
    log.warn('origin token unavailable; recording the edge address', errorFields(error));
    return sourceIp;
  }
  return token && sameToken(offered, token) ? viewer : sourceIp;
}

const sameToken = (offered: string, token: string) => {
  const a = Buffer.from(offered);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** `CloudFront-Viewer-Address` is `ip:port` (an IPv6 address unbracketed): the address, when it is one. */
function viewerIp(value: string | undefined): string | undefined {
  const at = value?.lastIndexOf(':') ?? -1;
  if (!value || at <= 0 || !/^\d{1,5}$/.test(value.slice(at + 1))) return undefined;
  const ip = value.slice(0, at);
  return isIP(ip) ? ip : undefined;
}
