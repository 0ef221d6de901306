// The strong ETags the service answers, a letter and a number each: GET answers them, a write takes them back
// as If-Match (if-match.ts parses them). Imports nothing, so the console formats an If-Match from a version a
// list answered (a user row, a rule set) with the service's own function rather than a copy of it.

/** A rule set version: `"v5"` (the version number identifies the content; `"v0"` is the shipped default). */
export const ruleSetEtag = (version: number) => `"v${version}"`;

/** An issue's triage (alert issues and AI issues alike): `"t3"`, moved by every PATCH and stored ticket. */
export const triageEtag = (version: number) => `"t${version}"`;

/** The general settings' revision: `"r3"`. */
export const generalEtag = (revision: number) => `"r${revision}"`;

/** An account's version as the users list answers it: `"u3"`, moved by each write of the account. */
export const userEtag = (version: number) => `"u${version}"`;
