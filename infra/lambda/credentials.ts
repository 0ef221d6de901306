// Bundled into every Lambda in place of @aws-sdk/credential-provider-node
// (an esbuild alias in infra/bundling.ts). A Lambda always receives its role's
// credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN,
// so the SDK's full chain (SSO, INI files, STS, IMDS: ~85 KB minified per bundle)
// would never be used there. Local runs (tsx, tests) use the real chain.
import type { AwsCredentialIdentity } from '@aws-sdk/types';
import { processEnv } from '../../shared/config/env.js';

export const defaultProvider = () => async (): Promise<AwsCredentialIdentity> => {
  // Read on every call, not cached: the SDK caches the credentials it is given.
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = processEnv();
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('No AWS credentials in the environment (expected inside AWS Lambda).');
  }
  return { accessKeyId, secretAccessKey, sessionToken };
};

// The same exports as the package it replaces: Lambda's environment credentials never need refreshing.
export const credentialsWillNeedRefresh = (): boolean => false;
export const credentialsTreatedAsExpired = (): boolean => false;
