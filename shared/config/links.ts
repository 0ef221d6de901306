// Where the console lives: links in invitation mail and in tickets.
import * as z from '../zod.js';
import { defineSettings } from './env.js';

export const linkSettings = defineSettings(
  'links',
  () => ({
    APP_URL: z._default(z.url({ protocol: /^https?$/, error: 'APP_URL must be an http(s) URL, e.g. https://fleet.example.com' }), 'http://localhost:3000'),
  }),
  { derive: (v) => ({ appUrl: v.APP_URL.replace(/\/+$/, '') }) },
);
