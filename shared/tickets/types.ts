// What every ticket provider takes and answers, shared by provider.ts, jira.ts and webhook.ts.

export interface TicketRequest {
  issue_id: string;
  summary: string; // one line, e.g. "[Critical] DiskUsageHigh on prod-db-1 (Acme Corp)"; truncate to 255 chars
  /** Plain-text paragraphs (blank-line separated); bullet lines start with "- ". */
  description: string;
  /** Link back to the issue in the app, e.g. https://fleet.example.com/issues/<id> */
  link: string;
  labels: string[]; // e.g. ['fleet-health', 'critical']
  severity: 'Critical' | 'Warning';
}

export interface CreatedTicket {
  key: string;
  url: string;
}

export interface TicketProvider {
  readonly name: 'jira' | 'webhook';
  /** `deadline` (epoch ms): the provider's answer must come by then, whatever its own timeout allows. */
  create(request: TicketRequest, deadline?: number): Promise<CreatedTicket>;
}

/**
 * A provider call failed (HTTP error, bad answer, timeout, network): message is safe to show to the user (never
 * contains credentials). `mayExist` when the provider may have created the ticket all the same: the request went
 * out and no answer said it was refused (a timeout or a dropped connection after sending, a 5xx, a 2xx or 3xx we
 * cannot read). Creating again then risks a second ticket, so the caller says to look for it first.
 */
export class TicketProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly mayExist = false,
  ) {
    super(message);
    this.name = 'TicketProviderError';
  }
}

/**
 * An answer's status leaves the ticket possibly created: a 5xx (the server may have failed after creating it).
 * Not a 4xx, which refuses it, nor a 3xx: redirects are not followed, and one sends the POST elsewhere (a login
 * page, http to https), so nothing was created where it was sent.
 */
export const mayExistAfter = (status: number) => status >= 500;
