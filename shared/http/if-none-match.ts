// Conditional reads (RFC 9110 §8.8.3, §13.1.2; RFC 9111): the GETs a watch page asks again every minute declare
// `revalidate` (route.ts) and answer a weak ETag; an If-None-Match naming it is answered 304 with no body. What
// the validator is made of, and why: shared/http/README.md ("Conditional reads").
import { createHash } from 'node:crypto';

/** A revalidating answer: the browser keeps it and asks again each time (no-cache); no shared cache keeps it (private: it is per user, behind a bearer token). */
export const REVALIDATE_CACHE_CONTROL = 'private, no-cache';

/** An entity-tag (RFC 9110 §8.8.3): optional `W/`, then a quoted string of etagc (no space, no `"`, no control, no DEL). */
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/**
 * The opaque tags an If-None-Match names: `'*'` for any current representation, a list of opaque tags
 * (weak and strong alike: a GET compares them weakly, §13.1.2), or undefined when the header is absent or not
 * a valid field value (a recipient then evaluates as if it were absent: a full answer, never a wrong 304).
 */
export function ifNoneMatchTags(header: string | undefined): '*' | string[] | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '*') return '*';
  const tags: string[] = [];
  // A list may hold empty elements (RFC 9110 §5.6.1); a quoted tag holds no comma (etagc excludes none, but a
  // comma inside one would need the whole list parsed as quoted strings: tags are split on the quotes below).
  let rest = value;
  while (rest.length) {
    const match = /^\s*(?:,\s*)*((?:W\/)?"[^"]*")\s*(?:,|$)/.exec(rest);
    if (!match) return rest.replace(/[\s,]/g, '') === '' ? (tags.length ? tags : undefined) : undefined;
    const tag = ENTITY_TAG.exec(match[1]!);
    if (!tag) return undefined;
    tags.push(tag[2]!);
    rest = rest.slice(match[0].length);
  }
  return tags.length ? tags : undefined;
}

/** Whether If-None-Match `header` names the current representation tagged `etag` (weak comparison): a GET or HEAD then answers 304. */
export function notModified(header: string | undefined, etag: string): boolean {
  const tags = ifNoneMatchTags(header);
  if (tags === undefined) return false;
  if (tags === '*') return true;
  const opaque = ENTITY_TAG.exec(etag)?.[2];
  return opaque !== undefined && tags.includes(opaque);
}

/** A digest of `parts` for a validator: 128 bits of SHA-256, base64url (22 characters, all etagc). */
export function validatorDigest(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('base64url').slice(0, 22);
}

/** The weak ETag of a revalidating answer: `W/"<version>.<digest>"`, or `W/"<digest>"` without a version. */
export const weakEtag = (digest: string, version?: string | number) => `W/"${version === undefined ? '' : `${version}.`}${digest}"`;
