// The console's Content-Security-Policy, in one place for the three that send it: the
// meta tag Vite writes into the built index.html (vite.config.ts), the header CloudFront
// adds (infra/fleet-health-stack.ts) and the header the local server adds (infra/local/server.ts).

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

/** frame-src for a deployment: the BI server's origin (EMBED_HOST), or no frames at all. */
export function deploymentPolicy(embedHost: string | undefined): string {
  if (!embedHost) return consolePolicy("'none'");
  if (!URL.canParse(embedHost)) throw new Error(`The BI server's address (EMBED_HOST, context embedHost) is not a URL: ${embedHost}`);
  return consolePolicy(new URL(embedHost).origin);
}
