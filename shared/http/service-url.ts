// The URL of a service we call (ticket system, LLM server, BI server), checked
// where it is configured: https, or plain http only to this machine, and no
// credentials in it. Misconfiguration answers 503; the detail never echoes the
// value, since a URL may carry credentials.
import { ServiceUnavailable } from './errors.js';

export const isLoopback = (url: URL): boolean => ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);

/** An https URL, or plain http to this machine (the local fakes): where a credential may be sent. */
export const isSecure = (url: URL): boolean => url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url));

/** isSecure for a URL as text; text that is no URL is not. */
export function isSecureUrl(value: string): boolean {
  try {
    return isSecure(new URL(value));
  } catch {
    return false;
  }
}

/** `query: 'refused'` also refuses a query string or fragment (a base URL the client appends paths to). */
export function serviceUrl(value: string, name: string, query: 'allowed' | 'refused' = 'refused'): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ServiceUnavailable(`${name} is not a valid URL.`);
  }
  const secure = isSecure(url);
  const extra = query === 'refused' && Boolean(url.search || url.hash);
  if (!secure || url.username || url.password || extra) {
    throw new ServiceUnavailable(
      query === 'refused'
        ? `${name} must be an https URL without credentials or query in it (plain http only to localhost).`
        : `${name} must be an https URL without credentials in it (plain http only to localhost).`,
    );
  }
  return url;
}
