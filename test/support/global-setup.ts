// Starts one in-memory DynamoDB Local for the whole run (suites isolate
// themselves with their own table prefix, test/support/dynamo.ts), and builds
// the console when dist/web is missing or stale.
import type { TestProject } from 'vitest/node';
import { ensureConsoleBuilt } from '../../infra/console.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../infra/local/dynamodb-local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

let dynamo: DynamoDbLocal | undefined;

export async function setup(project: TestProject): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // The console's build (dist/web) once, before any file starts a local service or synthesizes the stack,
  // so parallel test files never build it at the same time.
  const [, started] = await Promise.all([ensureConsoleBuilt(), startDynamoDbLocal({ startTimeoutMs: 60_000 })]);
  dynamo = started;
  project.provide('dynamoEndpoint', started.endpoint);
}

export async function teardown(): Promise<void> {
  await dynamo?.stop();
}
