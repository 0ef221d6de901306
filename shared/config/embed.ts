// Cookieless dashboard embedding (shared/embed/): the BI server and what the
// embed user may see. Optional: unset or incomplete, the embed routes answer 503
// naming what to set (never echoing a value).
//
//   EMBED_HOST              BI server URL, e.g. https://acme.bi.example.com:19999 (plain http only to localhost)
//   EMBED_CLIENT_ID         API client id
//   EMBED_CLIENT_SECRET     API client secret; on AWS, EMBED_CLIENT_SECRET_ARN names a Secrets Manager secret instead
//   EMBED_PERMISSIONS       optional comma list, default access_data,see_user_dashboards,see_lookml_dashboards
//   EMBED_MODELS            optional comma list of models the embed user may see (default none)
//   EMBED_USER_ATTRIBUTES   optional JSON object of user attributes, e.g. {"locale":"en_US"}
//   EMBED_GROUP_IDS         optional comma list of group ids
//   EMBED_EXTERNAL_GROUP_ID optional external group id
//   EMBED_TIMEOUT_MS        optional, default 10000, at most 20000: how long one call may take
//   EMBED_DASHBOARD         optional: the dashboard the console shows, a path on EMBED_HOST such as /embed/dashboards/7
import * as z from '../zod.js';
import { ServiceUnavailable } from '../http/errors.js';
import { serviceUrl } from '../http/service-url.js';
import { defineSettings, jsonOf, text, whole } from './env.js';
import { credential, secretVariables } from './secrets.js';

export const DEFAULT_PERMISSIONS = ['access_data', 'see_user_dashboards', 'see_lookml_dashboards'];

/** A comma list, trimmed and without repeats; undefined when blank. */
const commaList = () =>
  z.optional(
    z.pipe(
      z.string(),
      z.transform((raw: string) => [
        ...new Set(
          raw
            .split(',')
            .map((item) => item.trim())
            .filter(Boolean),
        ),
      ]),
    ),
  );

const USER_ATTRIBUTES_MESSAGE = 'EMBED_USER_ATTRIBUTES must be a JSON object of attribute names to strings, numbers or booleans.';
const UserAttributes = z.pipe(
  z.pipe(z.string(), z.transform(jsonOf(USER_ATTRIBUTES_MESSAGE))),
  z.record(z.string().check(z.minLength(1)), z.union([z.string(), z.number(), z.boolean()]), { error: USER_ATTRIBUTES_MESSAGE }),
);

const DASHBOARD_MESSAGE =
  'EMBED_DASHBOARD must be a path on EMBED_HOST such as /embed/dashboards/7: one leading /, no scheme or host, no spaces or fragment, at most 512 characters.';
/** A path (and optional query) on EMBED_HOST: not `//host`, not a URL, nothing the browser would read as another server. */
const DashboardPath = z.string().check(z.maxLength(512, { error: DASHBOARD_MESSAGE }), z.regex(/^\/[^/\\\s#?][^\\\s#]*$/, { error: DASHBOARD_MESSAGE }));

export const notConfigured = (missing = ['EMBED_HOST', 'EMBED_CLIENT_ID', 'EMBED_CLIENT_SECRET (or EMBED_CLIENT_SECRET_ARN)']) =>
  new ServiceUnavailable(`Dashboard embedding is not configured: set ${missing.join(', ')}.`);

/** null when nothing is set (the embed routes answer 503 saying what to set). */
export const embedSettings = defineSettings(
  'embed',
  () => ({
    EMBED_HOST: text(),
    EMBED_CLIENT_ID: text(),
    ...secretVariables('EMBED_CLIENT_SECRET'),
    EMBED_PERMISSIONS: commaList(),
    EMBED_MODELS: commaList(),
    EMBED_USER_ATTRIBUTES: z.optional(UserAttributes),
    EMBED_GROUP_IDS: commaList(),
    EMBED_EXTERNAL_GROUP_ID: text(),
    EMBED_TIMEOUT_MS: whole('EMBED_TIMEOUT_MS', 10_000, 1, 20_000, ' of milliseconds'),
    EMBED_DASHBOARD: z.optional(DashboardPath),
  }),
  {
    secrets: ['EMBED_CLIENT_SECRET'],
    failure: (message) => new ServiceUnavailable(message),
    derive: (v) => {
      const clientSecret = credential('EMBED_CLIENT_SECRET', v);
      if (!v.EMBED_HOST && !v.EMBED_CLIENT_ID && !clientSecret.configured) return null;
      const missing: string[] = (['EMBED_HOST', 'EMBED_CLIENT_ID'] as const).filter((name) => !v[name]);
      if (!clientSecret.configured) missing.push('EMBED_CLIENT_SECRET (or EMBED_CLIENT_SECRET_ARN)');
      if (missing.length > 0) throw notConfigured(missing);
      const host = serviceUrl(v.EMBED_HOST!, 'EMBED_HOST');
      // The embed protocol's pages (/login/embed/…, /embed/…) are at the server's root, where the console's
      // frame loads them: a path here would reach the API under it and a frame that is not there.
      if (host.pathname.replace(/\/+$/, '') !== '') {
        throw new ServiceUnavailable("EMBED_HOST must be the BI server's origin (scheme, host and port) with no path: the embed pages are at its root.");
      }
      return {
        /** The server's origin: no path, no trailing slash. */
        host: host.origin,
        clientId: v.EMBED_CLIENT_ID!,
        /** Resolved per login: on AWS the secret comes from Secrets Manager. */
        clientSecret: async () => {
          const value = await clientSecret.value();
          if (!value) throw new ServiceUnavailable('EMBED_CLIENT_SECRET is empty.');
          return value;
        },
        permissions: v.EMBED_PERMISSIONS?.length ? v.EMBED_PERMISSIONS : DEFAULT_PERMISSIONS,
        models: v.EMBED_MODELS ?? [],
        userAttributes: v.EMBED_USER_ATTRIBUTES ?? {},
        groupIds: v.EMBED_GROUP_IDS ?? [],
        ...(v.EMBED_EXTERNAL_GROUP_ID ? { externalGroupId: v.EMBED_EXTERNAL_GROUP_ID } : {}),
        timeoutMs: v.EMBED_TIMEOUT_MS,
        /** The dashboard the console shows, a path on `host`; undefined: the user picks one. */
        dashboard: v.EMBED_DASHBOARD,
      };
    },
  },
);
