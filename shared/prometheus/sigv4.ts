// AWS Signature Version 4 for Amazon Managed Service for Prometheus (auth:
// sigv4): the AWS SDK's own signer (@smithy/signature-v4, what every SDK client
// signs with) and the SDK's default credential chain (the Lambda role's
// variables on AWS; env, profile or SSO locally). Imported only when a source
// uses SigV4, so other code paths never load the credential chain.
import type { AwsCredentialIdentityProvider } from '@smithy/types';

let credentials: AwsCredentialIdentityProvider | undefined;

/** The headers that sign a POST of `body` to `url` (host, x-amz-date, x-amz-content-sha256, authorization, and the session token when there is one). */
export async function signedHeaders(url: URL, body: string, region: string, service: string): Promise<Record<string, string>> {
  const [{ SignatureV4 }, { Hash }, { defaultProvider }] = await Promise.all([
    import('@smithy/signature-v4'),
    import('@smithy/hash-node'),
    import('@aws-sdk/credential-provider-node'),
  ]);
  // The chain caches what it resolved and refreshes credentials before they expire.
  credentials ??= defaultProvider();
  const signer = new SignatureV4({ credentials, region, service, sha256: Hash.bind(null, 'sha256'), applyChecksum: true });
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    // `host` is signed; fetch sends the same value from the URL.
    headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) if (name.toLowerCase() !== 'host') headers[name.toLowerCase()] = String(value);
  return headers;
}

/** For tests that change the credentials in the environment. */
export function forgetAwsCredentials(): void {
  credentials = undefined;
}
