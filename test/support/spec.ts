// Reads the endpoint rows (`| GET | /api/... |`) of the API contract that sits
// beside the checkout at ../shared/spec/fleet-health-api.md.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SPEC_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/spec/fleet-health-api.md');

export function specEndpoints(): string[] {
  if (!existsSync(SPEC_PATH)) throw new Error(`API contract not found at ${SPEC_PATH}: the team's shared/ folder must sit beside the checkout`);
  const rows = readFileSync(SPEC_PATH, 'utf8').matchAll(/^\|\s*(GET|POST|PUT|PATCH|DELETE)\s*\|\s*(\/api\/\S+)\s*\|/gm);
  return [...rows].map((m) => `${m[1]} ${m[2]}`);
}
