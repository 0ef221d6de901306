// AWS Signature Version 4 for Amazon Managed Service for Prometheus (auth: sigv4):
// the signer every AWS request of this service uses (shared/aws/signing.ts) and the
// SDK's default credential chain (the Lambda role's variables on AWS; env, profile or
// SSO locally).
import { signedPost } from '../aws/signing.js';

/** The headers that sign a POST of `body` to `url` (x-amz-date, authorization, and the session token when there is one). */
export async function signedHeaders(url: URL, body: string, region: string, service: string): Promise<Record<string, string>> {
  const signed = await signedPost({ service, region, url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  // fetch sends Host and Content-Length itself, from the URL and the body: the values signed.
  const { host: _host, 'content-length': _length, ...headers } = signed;
  return headers;
}
