// The OpenAPI 3.1 document, generated from the route table (zod 4 → JSON Schema).
import * as z from 'zod';
import type { RouteGroup } from './route.js';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const PROBLEM = { $ref: '#/components/schemas/Problem' };

export function buildOpenApi(groups: readonly RouteGroup[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of groups) {
    for (const [id, route] of Object.entries(group.routes)) {
      if (route.method === 'ANY') continue; // the catch-all is an implementation detail
      const parameters: unknown[] = [];
      for (const [where, schema] of [
        ['path', route.params],
        ['query', route.query],
      ] as const) {
        if (!schema) continue;
        const json = schemaOf(schema, 'input');
        const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
        const required = new Set((json.required ?? []) as string[]);
        for (const [name, property] of Object.entries(properties)) {
          parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: property });
        }
      }
      const responses: Record<string, unknown> = {
        '200': {
          description: 'Success',
          content: { 'application/json': { schema: route.response ? schemaOf(route.response, 'output') : {} } },
        },
        default: { description: 'Problem', content: { 'application/problem+json': { schema: PROBLEM } } },
      };
      const operation: Record<string, unknown> = {
        operationId: `${group.name}.${id}`,
        tags: [group.name],
        summary: route.summary,
        parameters,
        responses,
        ...(route.auth === 'public' ? { security: [] } : {}),
        'x-roles': route.roles,
      };
      if (route.body) {
        operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
      }
      paths[route.path] ??= {};
      paths[route.path]![route.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Fleet Health Service', version },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
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
          },
        },
      },
    },
  };
}
