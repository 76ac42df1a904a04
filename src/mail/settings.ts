/** Outgoing mail's settings: SMTP, or `.eml` files in a folder without it. */
import { z } from 'zod';
import type { MailSettings } from './mailer.js';

export const mailEnvironment = z.object({
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').optional(),
  MAIL_FROM: z.string().min(3).default('Palanque <no-reply@palanque.app>'),
  MAIL_DIR: z.string().min(1).default('data/mail'),
});

export function mailSettingsOf(env: z.output<typeof mailEnvironment>): MailSettings {
  return { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM, directory: env.MAIL_DIR };
}
