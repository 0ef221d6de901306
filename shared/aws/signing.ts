// Signature Version 4 for every AWS request this service makes without an SDK client
// (DynamoDB, Secrets Manager, Amazon Managed Service for Prometheus): npm aws4, with the
// credentials of the SDK's provider chain. Inside Lambda that chain is the role's variables
// (infra/lambda/credentials.ts, an esbuild alias); elsewhere the SDK's whole chain (env,
// profile, SSO), which caches what it resolved and refreshes it before it expires.
import { defaultProvider } from '@aws-sdk/credential-provider-node';
// aws4 is CommonJS whose exports Node cannot list for a named import.
import aws4 from 'aws4';
import { onSettingsReset } from '../config/env.js';

let credentials: ReturnType<typeof defaultProvider> | undefined;
// Tests that change the credentials in the environment reset the settings.
onSettingsReset(() => {
  credentials = undefined;
});

export interface SignedRequest {
  /** The SigV4 service name: `dynamodb`, `secretsmanager`, `aps`. */
  service: string;
  region: string;
  url: URL;
  /** The request's headers besides host and the signature's; all are signed. */
  headers: Record<string, string>;
  body: string;
  /** Static credentials instead of the provider chain's: only for DynamoDB Local, which takes any (json-call.ts). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/**
 * The headers to send a POST with: `headers` plus Host (with the port when the URL has
 * one), Content-Length, X-Amz-Date, X-Amz-Security-Token (with a session token) and
 * Authorization. Sign afresh for each attempt: the date is part of the signature.
 */
export async function signedPost(request: SignedRequest): Promise<Record<string, string>> {
  const { accessKeyId, secretAccessKey, sessionToken } = request.credentials ?? (await (credentials ??= defaultProvider())());
  const signed = aws4.sign(
    {
      service: request.service,
      region: request.region,
      method: 'POST',
      host: request.url.hostname,
      ...(request.url.port ? { port: Number(request.url.port) } : {}),
      path: `${request.url.pathname}${request.url.search}`,
      headers: { ...request.headers },
      body: request.body,
    },
    { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) headers[name.toLowerCase()] = String(value);
  return headers;
}
