// What a read-cost test needs (the *-reads.test.ts files): this file's tables behind the proxy
// with a viewer to call the routes as, and how many items' given attributes a request on the
// wire may send back. Such a test fails on a read that grows with the data beyond its answer.
import { useTestTables } from './dynamo.js';
import type { DynamoProxy, WireRequest } from './dynamo-proxy.js';
import { userToken, useTestJwtSecret } from './tokens.js';

/** This file's tables behind the proxy, and a viewer's token. */
export async function useWatchedTables(): Promise<{ proxy: DynamoProxy; token: string }> {
  const { proxy } = await useTestTables({ proxy: true });
  useTestJwtSecret();
  return { proxy, token: await userToken('viewer') };
}

/** The attributes a read asks for (a batch: of its first table); undefined: every one. */
export function attributesAsked(request: WireRequest): string[] | undefined {
  const read = (request.operation === 'BatchGetItem' ? Object.values(request.input.RequestItems ?? {})[0] : request.input) as Record<string, any> | undefined;
  const names: Record<string, string> = read?.ExpressionAttributeNames ?? {};
  return (read?.ProjectionExpression as string | undefined)?.split(',').map((p) => names[p.trim()] ?? p.trim());
}

/**
 * How many items' `attributes` a request may send back: none when it asks for none of them, a
 * GetItem one, a batch the keys it names, a Query or Scan every item of its range: `rangeItems`
 * of it when the test can count them, else Infinity.
 */
export function itemsAskedFor(
  request: WireRequest,
  attributes: readonly string[],
  rangeItems: (request: WireRequest) => number = () => Number.POSITIVE_INFINITY,
): number {
  if (!['GetItem', 'BatchGetItem', 'Query', 'Scan'].includes(request.operation)) return 0;
  const asked = attributesAsked(request);
  if (asked && !asked.some((a) => attributes.includes(a))) return 0;
  if (request.operation === 'GetItem') return 1;
  if (request.operation === 'BatchGetItem') return (Object.values(request.input.RequestItems ?? {})[0] as { Keys: unknown[] }).Keys.length;
  return rangeItems(request);
}
