// API Gateway HTTP API (payload 2.0) events for calling a group handler directly.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

export interface EventInput {
  method: string;
  path: string;
  routeKey?: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
}

export function apiEvent(input: EventInput): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: input.routeKey ?? '$default',
    rawPath: input.path,
    rawQueryString: new URLSearchParams(input.query ?? {}).toString(),
    // A body goes as a client sends it, declared JSON, unless the test says otherwise.
    headers:
      input.body !== undefined && !Object.keys(input.headers ?? {}).some((h) => h.toLowerCase() === 'content-type')
        ? { 'content-type': 'application/json', ...input.headers }
        : (input.headers ?? {}),
    queryStringParameters: input.query,
    pathParameters: input.params,
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      // API Gateway's word for the User-Agent header, when the event carries one.
      http: { method: input.method, path: input.path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: input.headers?.['user-agent'] ?? 'vitest' },
      requestId: randomUUID(),
      routeKey: input.routeKey ?? '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: input.body,
    isBase64Encoded: input.isBase64Encoded ?? false,
  };
}

export const lambdaContext = { awsRequestId: 'test', getRemainingTimeInMillis: () => 29_000 } as unknown as Context;

export type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export async function call(handler: Handler, input: EventInput) {
  const result = await handler(apiEvent(input), lambdaContext);
  return { ...result, json: result.body ? (JSON.parse(result.body) as Record<string, any>) : undefined };
}
