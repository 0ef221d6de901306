// Renders errors as RFC 9457 problem details. A 5xx that is not one of our
// typed errors says only "Internal error" and the request id.
import { HttpError } from './errors.js';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemResponse(error: unknown, requestId: string): APIGatewayProxyStructuredResultV2 {
  const known = error instanceof HttpError;
  const status = known ? error.status : 500;
  const body = known
    ? { type: 'about:blank', title: error.title, status, detail: error.message, ...error.extra, request_id: requestId }
    : {
        type: 'about:blank',
        title: 'Internal Server Error',
        status,
        detail: `Internal error. Quote request id ${requestId} when reporting it.`,
        request_id: requestId,
      };
  return {
    statusCode: status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Cache-Control': 'no-store', ...(known ? error.headers : {}) },
    body: JSON.stringify(body),
  };
}
