// The console's Content-Security-Policy, in one place for the three that send it: the
// meta tag Vite writes into the built index.html (vite.config.ts), the header CloudFront
// adds (infra/fleet-health-stack.ts) and the header the local server adds (infra/local/server.ts);
// and the API's policy and the security headers both send with every answer.

/**
 * Scripts, data and styles come from the console's own origin (the API is on it: /api/*);
 * images too (and data: URLs), so nothing the console renders (AI Markdown above all, whose
 * text a prompt-injected model may write) can make the browser fetch another origin. Inline
 * styles stay allowed: the editor injects its own. `frameSource` is the origin the BI
 * dashboards are embedded from.
 */
export function consolePolicy(frameSource: string): string {
  return [
    "default-src 'self'",
    "img-src 'self' data:",
    "style-src 'self' 'unsafe-inline'",
    `frame-src ${frameSource}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

/**
 * The built index.html is the same for every deployment, so its meta tag allows any frame;
 * the header, which knows the deployment's BI server, narrows that to its origin (`'none'`
 * without one). A browser enforces every policy it is given, so the header decides.
 */
export const BUILT_POLICY = consolePolicy('*');

/**
 * No page may frame the console (clickjacking), as X-Frame-Options DENY says to older browsers.
 * Sent in the header only: a browser ignores frame-ancestors in a meta tag, and says so in its console.
 */
const NO_FRAMING = "frame-ancestors 'none'";

/** The header's policy for a deployment: frame-src the BI server's origin (EMBED_HOST), or no frames at all; framed by nobody. */
export function deploymentPolicy(embedHost: string | undefined): string {
  if (embedHost && !URL.canParse(embedHost)) throw new Error(`The BI server's address (EMBED_HOST, context embedHost) is not a URL: ${embedHost}`);
  return `${consolePolicy(embedHost ? new URL(embedHost).origin : "'none'")}; ${NO_FRAMING}`;
}

/** The policy of API answers (JSON, the OpenAPI document, Prometheus text): they load nothing, and nobody frames them. */
export const API_POLICY = `default-src 'none'; ${NO_FRAMING}`;

/**
 * What every answer carries besides its policy, the console's and the API's alike: CloudFront's response
 * headers policies send these (and HSTS, which a browser ignores over http, and X-XSS-Protection), and so
 * does the local server.
 */
export const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
} as const;
