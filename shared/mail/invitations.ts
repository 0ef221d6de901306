// Account mail through Amazon SES (SendEmail): an invitation, and a password reset's link.
// Sending is optional: without SES_FROM_ADDRESS, or when SES refuses, the caller hands the
// link's token over instead. The token is never logged.
import { domainToASCII } from 'node:url';
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { linkSettings } from '../config/links.js';
import { boundedBytes } from '../http/outbound.js';
import { NOT_ASCII } from '../text.js';
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

/** A password reset's link: the console's page for it calls the same activation route (the token says what it does). */
export function passwordResetLink(token: string): string {
  return `${linkSettings().appUrl}/reset-password#token=${encodeURIComponent(token)}`;
}

export interface InvitationMail {
  to: string;
  displayName: string;
  invitedBy: string;
  role: string;
  token: string;
}

export interface PasswordResetMail {
  to: string;
  displayName: string;
  resetBy: string;
  /** How long the link works, as the mail says it ("3 days"). */
  validFor: string;
  token: string;
}

/**
 * Why an account mail was not sent: no sender is configured; SES answered with a refusal (a sandboxed account,
 * an unverified address, a permission: its reason is logged); or no answer was read in time, so it may have gone.
 */
export type MailProblem = NonNullable<InviteResponse['email_problem']>;

/** Null when SES accepted the message; otherwise why it was not sent. */
export async function sendInvitation(mail: InvitationMail): Promise<MailProblem | null> {
  return send('invitation', mail.to, 'Your Fleet Health Service invitation', () => [
    `Hello ${mail.displayName},`,
    '',
    `${mail.invitedBy} invited you to the Fleet Health Service as ${mail.role}.`,
    `Choose your password here within 7 days: ${activationLink(mail.token)}`,
    '',
    'Your username is this email address.',
  ]);
}

/** Null when SES accepted the message; otherwise why it was not sent. */
export async function sendPasswordReset(mail: PasswordResetMail): Promise<MailProblem | null> {
  return send('password reset', mail.to, 'Your Fleet Health Service password was reset', () => [
    `Hello ${mail.displayName},`,
    '',
    `${mail.resetBy} reset your Fleet Health Service password: the old one no longer signs in, and your sessions have ended.`,
    `Choose a new password here within ${mail.validFor}: ${passwordResetLink(mail.token)}`,
    '',
    'If you did not expect this, tell your administrators.',
  ]);
}

/**
 * An address as SES takes it: SES does not speak SMTPUTF8, so an address must be 7-bit ASCII, a Unicode
 * domain in Punycode and a Unicode "friendly from" name as a MIME encoded-word (RFC 2047). Sent as configured,
 * `Überwachung <ops@example.com>` or `ops@bücher.example` in SES_FROM_ADDRESS made SES refuse every mail.
 * A local part (before the @) is ASCII already: SES has no encoding for it, and the setting refuses one that is not.
 */
export function sesAddress(address: string): string {
  const named = /^\s*(.*?)\s*<([^<>]*)>\s*$/.exec(address);
  const mailbox = named ? named[2]! : address.trim();
  const at = mailbox.lastIndexOf('@');
  const domain = mailbox.slice(at + 1);
  const ascii = at > 0 && NOT_ASCII.test(domain) ? domainToASCII(domain) : '';
  const sent = ascii ? `${mailbox.slice(0, at)}@${ascii}` : mailbox;
  if (!named) return sent;
  const name = named[1]!.replace(/^"(.*)"$/, '$1');
  if (!name) return sent;
  const shown = NOT_ASCII.test(name) ? `=?UTF-8?B?${Buffer.from(name, 'utf8').toString('base64')}?=` : named[1]!;
  return `${shown} <${sent}>`;
}

/** `lines` are made only when a mail goes: the link reads APP_URL, which matters (and is checked) only then. */
async function send(kind: string, to: string, subject: string, lines: () => string[]): Promise<MailProblem | null> {
  if (!mailConfigured()) return 'not_configured';
  const text = lines().join('\n');
  // Every body the SDK reads goes through its stream collector: an answer without end is cut, not read for the whole timeout.
  ses ??= new SESClient({ maxAttempts: 2, streamCollector: (body: AsyncIterable<Uint8Array>) => boundedBytes(body, SES_ANSWER_MAX_BYTES) });
  try {
    await ses.send(
      new SendEmailCommand({
        Source: sesAddress(mailSettings().fromAddress!),
        Destination: { ToAddresses: [to] },
        Message: {
          Subject: { Data: subject, Charset: 'UTF-8' },
          Body: { Text: { Data: text, Charset: 'UTF-8' } },
        },
      }),
      // The SDK waits on SES without limit; a hung call would outlast the route, leaving the
      // answer that carries the link unsent.
      { abortSignal: AbortSignal.timeout(mailSettings().timeoutMs) },
    );
    return null;
  } catch (error) {
    const { error: name, error_message } = errorFields(error);
    // A 4xx is SES's refusal. Anything else left it unknown: a timeout, a connection lost, an answer cut, and a 5xx
    // (InternalFailure, ServiceUnavailable: SES may have failed after taking the message), which was told to the
    // inviter as a refusal ("often a sandboxed account") while the mail could still arrive.
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    const problem: MailProblem = status !== undefined && status >= 400 && status < 500 ? 'refused' : 'no_answer';
    log.warn(`${kind} mail not sent`, { to, error: name, error_message, problem });
    return problem;
  }
}
