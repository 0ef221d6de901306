// The asynchronous Lambda invocation behind invokeWorker (worker-invoke.ts), loaded by the
// first worker start on AWS: route groups that can start a worker (refresh, patrol trigger,
// pull) start without the Lambda client, ≈ 69 KB (issue 21 §4). Imported by name, so esbuild
// keeps only the client and Invoke.
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';

let client: LambdaClient | undefined;

/** Invokes `functionName` with `event` (InvocationType Event); answers Lambda's status code (202: queued). */
export async function invokeAsync(functionName: string, event: Record<string, unknown>): Promise<number | undefined> {
  client ??= new LambdaClient({});
  const out = await client.send(
    new InvokeCommand({ FunctionName: functionName, InvocationType: 'Event', Payload: new TextEncoder().encode(JSON.stringify(event)) }),
  );
  return out.StatusCode;
}
