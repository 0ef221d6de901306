// The asynchronous Lambda invocation behind invokeWorker (worker-invoke.ts), loaded by the
// first worker start on AWS: route groups that can start a worker (refresh, patrol trigger,
// pull) start without the Lambda client, ≈ 69 KB (issue 21 §4). Imported by name, so esbuild
// keeps only the client and Invoke.
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';

let client: LambdaClient | undefined;

/**
 * How long a start may take, the SDK's retries included: an asynchronous invoke is queued in tens of milliseconds.
 * The SDK waits on Lambda without limit; a hung call held the route (refresh, patrol trigger, pull now) until its
 * Lambda timed out, so the caller's clean-up (its run marked failed, its lock released) never ran.
 */
export const INVOKE_TIMEOUT_MS = 5_000;

/** Invokes `functionName` with `event` (InvocationType Event); answers Lambda's status code (202: queued). */
export async function invokeAsync(functionName: string, event: Record<string, unknown>): Promise<number | undefined> {
  client ??= new LambdaClient({});
  const out = await client.send(
    new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: new TextEncoder().encode(JSON.stringify(event)) }),
    { abortSignal: AbortSignal.timeout(INVOKE_TIMEOUT_MS) },
  );
  return out.StatusCode;
}
