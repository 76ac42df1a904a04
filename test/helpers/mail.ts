/** The mail a test app wrote: the .eml files of its MAIL_DIR, parsed with postal-mime. */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import PostalMime, { type Email } from 'postal-mime';
import type { TestApp } from './app.js';
import { waitFor } from './process.js';

export const MAIL_WRITTEN = 'mail written to a file (no SMTP_URL)';
/** Long enough for a background send that was going to happen to have happened. */
export const SETTLE_MS = 400;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Mail {
  file: string;
  email: Email;
}

/** Every .eml file the app wrote so far, parsed, oldest first. */
export async function readMails(app: TestApp): Promise<Mail[]> {
  const files = (await readdir(app.mailDir)).filter((name) => name.endsWith('.eml'));
  // Names are `<ISO time>-<pid>-<sequence>.eml`: order by time, then by sequence as a number.
  const key = (name: string) => {
    const match = /^(.*)-\d+-(\d+)\.eml$/.exec(name);
    return [match?.[1] ?? name, Number(match?.[2] ?? 0)] as const;
  };
  files.sort((a, b) => {
    const [ta, sa] = key(a);
    const [tb, sb] = key(b);
    return ta === tb ? sa - sb : ta < tb ? -1 : 1;
  });
  return Promise.all(files.map(async (file) => ({ file, email: await PostalMime.parse(await readFile(path.join(app.mailDir, file))) })));
}

/**
 * Waits until the app has finished writing `count` mails in all (its mailer logs each one after the file
 * is complete, so no half-written file is read), then returns the files that are in the folder.
 */
export async function waitForMails(app: TestApp, count: number): Promise<Mail[]> {
  await waitFor(() => (app.logs.filter((line) => line.msg === MAIL_WRITTEN).length >= count ? true : undefined), {
    timeoutMs: 10_000,
    what: `${count} mail(s) written to ${app.mailDir}`,
    output: () => JSON.stringify(app.logs.slice(-20), null, 1),
  });
  return readMails(app);
}

export function recipients(email: Email): string[] {
  return (email.to ?? []).flatMap((address) => (address.group ? address.group.map((member) => member.address) : [address.address]));
}

/**
 * The token of the newest sign-up confirmation mailed to `email` in a folder of .eml files, waiting for
 * it to be written (the mail goes out after the answer).
 */
export async function confirmationTokenIn(mailDir: string, email: string): Promise<string> {
  const found = async () => {
    const files = (await readdir(mailDir).catch(() => [] as string[])).filter((name) => name.endsWith('.eml')).sort().reverse();
    for (const file of files) {
      const mail = await PostalMime.parse(await readFile(path.join(mailDir, file)));
      const token = /verify_email\/\?token=(\S+)/.exec(mail.text ?? '')?.[1];
      if (token && recipients(mail).includes(email.toLowerCase())) return token;
    }
    return undefined;
  };
  return waitFor(found, { timeoutMs: 10_000, what: `a confirmation mail to ${email} in ${mailDir}` });
}
