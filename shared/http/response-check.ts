// Outside production every answer is checked against its route's declared
// response schema, so the domain and the contract cannot drift apart silently:
// a mismatch is an internal error with the paths that differ (tests fail).
// zod's parse drops undeclared keys, while the published OpenAPI says
// `additionalProperties: false`; so fields the schema does not declare count too.
import type * as z from '../zod.js';
import { coreSettings } from '../config/core.js';

/** Keys of `sent` (recursively) that the parsed value no longer has: undeclared in the schema. */
function undeclared(sent: unknown, parsed: unknown, path: string, out: string[]): void {
  if (out.length >= 5 || sent === null || parsed === null || typeof sent !== 'object' || typeof parsed !== 'object') return;
  if (Array.isArray(sent)) {
    if (Array.isArray(parsed)) for (let i = 0; i < sent.length && out.length < 5; i++) undeclared(sent[i], parsed[i], `${path}[${i}]`, out);
    return;
  }
  for (const [key, value] of Object.entries(sent as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (!(key in (parsed as Record<string, unknown>))) out.push(`${path}.${key}`);
    else undeclared(value, (parsed as Record<string, unknown>)[key], `${path}.${key}`, out);
  }
}

/** Why `body` does not match `schema` (at most five paths), or null when it does. */
export function responseDrift(schema: z.ZodMiniType, body: unknown): string | null {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    return parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
      .join('; ');
  }
  const extra: string[] = [];
  undeclared(body, parsed.data, '', extra);
  return extra.length ? `undeclared fields ${extra.map((p) => p.slice(1)).join(', ')}` : null;
}

/** Checked when the stage is not prod (tests, npm start, a dev stack); VALIDATE_RESPONSES=false turns it off. */
export const checkResponses = (): boolean => coreSettings().checkResponses;
