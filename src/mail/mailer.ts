/**
 * Outgoing e-mail with nodemailer. With SMTP_URL the messages go to that server; without it (the
 * embedded default, development, tests) each message is written as an `.eml` file under MAIL_DIR and
 * its path is logged, so a developer can open the reset mail that a real user would receive.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../logger.js';
import { projectRoot } from '../project-root.js';

export interface MailSettings {
  /** smtp:// or smtps:// URL with credentials; unset writes .eml files instead. */
  smtpUrl: string | undefined;
  from: string;
  /** Folder of the .eml files (relative paths resolve against the project). */
  directory: string;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export function createMailer(settings: MailSettings, logger: Logger): Mailer {
  return settings.smtpUrl ? smtpMailer(settings.smtpUrl, settings.from, logger) : fileMailer(settings, logger);
}

function smtpMailer(smtpUrl: string, from: string, logger: Logger): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  return {
    async send(message) {
      const info = await transport.sendMail({ from, ...message });
      logger.info({ to: message.to, subject: message.subject, message_id: info.messageId }, 'mail sent');
    },
  };
}

function fileMailer(settings: MailSettings, logger: Logger): Mailer {
  // The stream transport renders the full RFC 5322 message without sending it.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const directory = path.resolve(projectRoot, settings.directory);
  let sequence = 0;
  return {
    async send(message) {
      const info = await transport.sendMail({ from: settings.from, ...message });
      await mkdir(directory, { recursive: true });
      sequence += 1;
      const file = path.join(directory, `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${sequence}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      logger.info({ to: message.to, subject: message.subject, file }, 'mail written to a file (no SMTP_URL)');
    },
  };
}
