// The OpenAPI 3.1 document, generated from the route table (zod 4 → JSON Schema).
import * as z from '../zod.js';
import { problemStatuses } from './problem-statuses.js';
import type { ProblemStatus, RouteGroup } from './route.js';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodMiniType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const PROBLEM = { $ref: '#/components/schemas/Problem' };

const PROBLEM_TITLES: Record<ProblemStatus, string> = {
  400: 'Bad Request',
  401: 'Unauthorized: no valid bearer token',
  403: "Forbidden: the caller's role may not use this route",
  404: 'Not Found',
  406: 'Not Acceptable: the answer is over the 6 MB a Lambda function may return unless gzipped (send Accept-Encoding: gzip)',
  409: 'Conflict: the write lost to a concurrent one, or the state does not allow it',
  412: 'Precondition Failed: an If-Match sent to a write that keeps no version to match (send none)',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type: a body must be sent as application/json',
  422: 'Unprocessable Entity: the request failed validation',
  429: 'Too Many Requests (see Retry-After)',
  502: 'Bad Gateway: a provider the service called failed',
  503: 'Service Unavailable: the capability is not configured, the work failed, or AWS throttled the request (see Retry-After)',
};

/** On a 429 always; on a 503 when retrying may help (throttled, an AWS failure, a passing overload), not when a capability is unconfigured. */
const RETRY_AFTER = { description: 'Seconds to wait before sending the request again', schema: { type: 'integer', minimum: 1 } };

const STAGE_THROTTLE = {
  description:
    'Too Many Requests: the API stage throttle (API Gateway answers `{"message": "Too Many Requests"}`); a route that limits callers itself answers problem+json',
  content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } } },
};

/** The document's outline (OpenApiResponse in shared/routes/auth.ts checks it). */
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, unknown>;
  [key: string]: unknown;
}

export function buildOpenApi(groups: readonly RouteGroup[], version: string): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const [id, route] of Object.entries(group.routes)) {
      if (route.method === 'ANY') continue; // the catch-all is an implementation detail
      const parameters: unknown[] = [];
      for (const [where, schema] of [
        ['path', route.params],
        ['query', route.query],
        ['header', route.headers],
      ] as const) {
        if (!schema) continue;
        const json = schemaOf(schema, 'input');
        const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
        const required = new Set((json.required ?? []) as string[]);
        for (const [name, property] of Object.entries(properties)) {
          parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: property });
        }
      }
      // A revalidating read (`revalidate`): If-None-Match in, its weak ETag and Cache-Control out, and the 304.
      const revalidating = route.revalidate
        ? {
            ETag: { description: route.revalidate, schema: { type: 'string' } },
            'Cache-Control': { description: 'private, no-cache', schema: { type: 'string' } },
          }
        : undefined;
      if (route.revalidate)
        parameters.push({
          name: 'if-none-match',
          in: 'header',
          required: false,
          description: "ETags of answers the client holds (or *): 304 Not Modified, no body, when one is the current answer's (weak comparison).",
          schema: { type: 'string' },
        });
      const responses: Record<string, unknown> = {
        '200': {
          description: 'Success',
          ...(route.etag ? { headers: { ETag: { description: route.etag, schema: { type: 'string' } } } } : {}),
          ...(revalidating ? { headers: revalidating } : {}),
          content: { [route.contentType ?? 'application/json']: { schema: route.response ? schemaOf(route.response, 'output') : {} } },
        },
        ...(revalidating ? { '304': { description: 'Not Modified: the answer is the one the If-None-Match names', headers: revalidating } } : {}),
        ...(route.accepted
          ? {
              '202': {
                description: 'Accepted: the work goes on; poll for its result',
                content: { 'application/json': { schema: schemaOf(route.accepted, 'output') } },
              },
            }
          : {}),
        // Any route may meet the HTTP API stage's throttle, which answers 429 with API Gateway's own body.
        '429': STAGE_THROTTLE,
        ...Object.fromEntries(
          problemStatuses(route).map((status) => [
            String(status),
            {
              description: PROBLEM_TITLES[status],
              ...(status === 429 || status === 503 ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
              content: { 'application/problem+json': { schema: PROBLEM } },
            },
          ]),
        ),
        default: { description: 'Internal error', content: { 'application/problem+json': { schema: PROBLEM } } },
      };
      const operation: Record<string, unknown> = {
        operationId: `${group.name}.${id}`,
        tags: [group.name],
        summary: route.summary,
        parameters,
        responses,
        // Alternatives: a user's JWT, or (ingest, scrape) the service's static token for machines.
        ...(route.auth === 'public' ? { security: [] } : route.auth === 'user' ? {} : { security: [{ bearer: [] }, { [`${route.auth}Token`]: [] }] }),
        'x-roles': route.roles,
      };
      if (route.body) {
        // A body whose schema takes none (a default: the patrol trigger's) is optional.
        const required = !route.body.safeParse(undefined).success;
        operation.requestBody = { required, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
      }
      paths[route.path] ??= {};
      paths[route.path]![route.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Fleet Health Service', version, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "A user's token from POST /api/auth/login." },
        ingestToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The static INGEST_TOKEN (Alertmanager, the ingest CLI); on AWS the secret IngestTokenArn names.',
        },
        scrapeToken: { type: 'http', scheme: 'bearer', description: "Prometheus' static SCRAPE_TOKEN; on AWS the secret ScrapeTokenArn names." },
      },
      schemas: {
        Problem: {
          type: 'object',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string' },
            title: { type: 'string' },
            status: { type: 'integer' },
            detail: { type: 'string' },
            request_id: { type: 'string' },
            errors: {
              type: 'array',
              items: {
                type: 'object',
                properties: { loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: { type: 'string' }, type: { type: 'string' } },
              },
            },
            // Members some answers add (RFC 9457 extensions), for a client to act on without reading `detail`.
            current_etag: { type: 'string', description: 'A 409 of a write with If-Match (triage, general settings, an account): the ETag stored now.' },
            current: { type: 'object', description: 'With current_etag: the stored fields that write would have changed.' },
            current_version: { type: 'integer', description: 'A 409 of a rule-set edit or proposal review: the version live now.' },
            base_version: { type: 'integer', description: 'With current_version: the version the edit was based on.' },
            change_status: {
              type: ['string', 'null'],
              description: 'A 409 of a proposal review or withdrawal: the status it has now (approved, rejected, withdrawn), null if unknown.',
            },
            reviewed_by: { type: ['string', 'null'], description: 'With change_status: who decided it.' },
            reviewed_at: { type: ['string', 'null'], format: 'date-time', description: 'With change_status: when.' },
            superseded_by: { type: 'string', description: 'A 409 on an issue regrouping merged into another: the live issue to act on.' },
            ticket_key: { type: 'string', description: 'A 409 of create-ticket: the ticket the issue has (or that was created but not recorded).' },
            ticket_url: { type: 'string' },
            ticket_may_exist: { type: 'boolean', description: 'A 409 of create-ticket: an earlier create got no definite answer; look for ticket_label.' },
            ticket_label: { type: 'string', description: 'The label the service gives its tickets for this issue.' },
            ticket_unconfirmed_at: { type: 'string', format: 'date-time' },
            ticket_claimed_at: { type: 'string', format: 'date-time' },
            limit: {
              type: 'string',
              enum: ['username', 'address', 'daily_budget', 'one_at_a_time'],
              description: "A 429's window: a login name's, the caller's network's, a person's daily chat budget, or one chat message at a time.",
            },
          },
        },
      },
    },
  };
}
