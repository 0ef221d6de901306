// Who sends invitation mail (SES); unset, no mail is sent and the invite
// answer carries the activation token. SES_TIMEOUT_MS (default 8000, at most
// 20000): how long sending one invitation may take, inside the route's 29 s;
// past it the invite answers email_sent false with the activation token.
import * as z from '../zod.js';
import { NOT_ASCII } from '../text.js';
import { defineSettings, whole } from './env.js';

/**
 * SES does not speak SMTPUTF8: a Unicode name or domain is encoded when sent (shared/mail/, sesAddress), but a
 * local part has no encoding SES takes, so every mail from `bjørn@example.com` would be refused.
 */
function asciiLocalPart(address: string): boolean {
  const mailbox = /<([^<>]*)>\s*$/.exec(address)?.[1] ?? address;
  return !NOT_ASCII.test(mailbox.slice(0, mailbox.lastIndexOf('@')));
}

export const mailSettings = defineSettings(
  'mail',
  () => ({
    SES_FROM_ADDRESS: z.optional(
      z
        .string()
        .check(
          z.maxLength(320),
          z.includes('@', { error: 'SES_FROM_ADDRESS must be an email address' }),
          z.refine(asciiLocalPart, { error: 'SES_FROM_ADDRESS must have an ASCII part before the @: SES sends from no other' }),
        ),
    ),
    SES_TIMEOUT_MS: whole('SES_TIMEOUT_MS', 8_000, 1, 20_000, ' of milliseconds'),
  }),
  { derive: (v) => ({ fromAddress: v.SES_FROM_ADDRESS, timeoutMs: v.SES_TIMEOUT_MS }) },
);
