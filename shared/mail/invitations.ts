// Invitation mail through Amazon SES (SendEmail). Sending is optional: without
// SES_FROM_ADDRESS, or when SES refuses, the caller hands the activation token
// to the inviter instead. The token is never logged.
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { linkSettings } from '../config/links.js';
import { boundedBytes } from '../http/outbound.js';
import { mailSettings } from '../config/mail.js';
import { createLogger, errorFields } from '../log.js';
import type { InviteResponse } from '../routes/settings.js';

const log = createLogger('mail');
let ses: SESClient | undefined;
/** SES answers a SendEmail in well under 1 KB (a message id), an error in a few hundred bytes. */
const SES_ANSWER_MAX_BYTES = 64 * 1024;

export function mailConfigured(): boolean {
  return Boolean(mailSettings().fromAddress);
}

/** In the fragment: a browser never sends it, so no access log (CloudFront's) or Referer holds the token. */
export function activationLink(token: string): string {
  return `${linkSettings().appUrl}/activate#token=${encodeURIComponent(token)}`;
}

export interface InvitationMail {
  to: string;
  displayName: string;
  invitedBy: string;
  role: string;
  token: string;
}

/**
 * Why an invitation mail was not sent: no sender is configured; SES answered with a refusal (a sandboxed account,
 * an unverified address, a permission: its reason is logged); or no answer was read in time, so it may have gone.
 */
export type MailProblem = NonNullable<InviteResponse['email_problem']>;

/** Null when SES accepted the message; otherwise why it was not sent. */
export async function sendInvitation(mail: InvitationMail): Promise<MailProblem | null> {
  if (!mailConfigured()) return 'not_configured';
  // Every body the SDK reads goes through its stream collector: an answer without end is cut, not read for the whole timeout.
  ses ??= new SESClient({ maxAttempts: 2, streamCollector: (body: AsyncIterable<Uint8Array>) => boundedBytes(body, SES_ANSWER_MAX_BYTES) });
  const link = activationLink(mail.token);
  const text = [
    `Hello ${mail.displayName},`,
    '',
    `${mail.invitedBy} invited you to the Fleet Health Service as ${mail.role}.`,
    `Choose your password here within 7 days: ${link}`,
    '',
    'Your username is this email address.',
  ].join('\n');
  try {
    await ses.send(
      new SendEmailCommand({
        Source: mailSettings().fromAddress!,
        Destination: { ToAddresses: [mail.to] },
        Message: {
          Subject: { Data: 'Your Fleet Health Service invitation', Charset: 'UTF-8' },
          Body: { Text: { Data: text, Charset: 'UTF-8' } },
        },
      }),
      // The SDK waits on SES without limit; a hung call would outlast the route, leaving the user
      // invited without the answer that carries their activation link.
      { abortSignal: AbortSignal.timeout(mailSettings().timeoutMs) },
    );
    return null;
  } catch (error) {
    const { error: name, error_message } = errorFields(error);
    // An HTTP error status is SES's refusal; anything else (a timeout, a connection lost, an answer cut) left it unknown.
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    const problem: MailProblem = status !== undefined && status >= 400 ? 'refused' : 'no_answer';
    log.warn('invitation mail not sent', { to: mail.to, error: name, error_message, problem });
    return problem;
  }
}
