// Who sends invitation mail (SES); unset, no mail is sent and the invite
// answer carries the activation token.
import * as z from 'zod';
import { defineSettings } from './env.js';

export const mailSettings = defineSettings(
  'mail',
  {
    SES_FROM_ADDRESS: z.string().max(320).includes('@', { error: 'SES_FROM_ADDRESS must be an email address' }).optional(),
  },
  { derive: (v) => ({ fromAddress: v.SES_FROM_ADDRESS }) },
);
