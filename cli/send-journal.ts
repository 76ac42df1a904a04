/**
 * The journal of a batched `sms send`: which batches of a recipient list went out, in a file of its own
 * under the CLI's configuration folder (`sms-sends/<key>.json` beside the configuration file), so that
 * `--resume` continues a send that was interrupted or failed where it stopped.
 *
 * What holds:
 * - a send is found by its key: the hash of the recipient list as read, the text and the credential.
 *   `--resume` continues the run recorded under it; a send without `--resume` is a new run (the
 *   deliberate resend of a list), which replaces the record;
 * - a batch is recorded as soon as the server answered it with its campaign (written to a temporary file
 *   and renamed, so a record is whole or absent);
 * - each batch carries an Idempotency-Key derived from its run, the text, the credential and the batch's
 *   recipients: a batch whose answer was lost (a dropped connection, a process killed before it could
 *   record it) is sent again on resume with the same key, and the server answers with the campaign it
 *   created the first time instead of creating another (for the 24 hours it keeps a key). A new run has
 *   new keys, so a deliberate resend does send again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface SentBatch {
  /** 1-based, of `batches`. */
  batch: number;
  /** The campaign the server created for it; null when the server sent nothing (every number opted out). */
  campaign: number | null;
  accepted: number;
  idempotency_key: string;
}

export interface SendJournal {
  version: 1;
  /** This run's id, part of every batch's idempotency key. */
  run: string;
  started_at: string;
  title: string;
  credential: number;
  batch_size: number;
  batches: number;
  entries: number;
  sent: SentBatch[];
  finished: boolean;
}

/** What names a send: its recipient list (as read), its text and its credential. */
export interface SendIdentity {
  recipients: string;
  text: string;
  credential: number;
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** The journal's key: the list's content hash, the text and the credential, hashed together. */
export function journalKeyOf({ recipients, text, credential }: SendIdentity): string {
  return sha256(JSON.stringify([sha256(recipients), text, credential])).slice(0, 32);
}

/** Where the journal of a send lives, beside the configuration file. */
export function journalPathOf(configFile: string, identity: SendIdentity): string {
  return join(dirname(configFile), 'sms-sends', `${journalKeyOf(identity)}.json`);
}

/** A batch's Idempotency-Key: the same for the same run, text, credential and recipients, so a retry or a resume never doubles it. */
export function batchIdempotencyKey(run: string, text: string, credential: number, recipients: string): string {
  return `sms-batch-${sha256(JSON.stringify([run, text, credential, recipients])).slice(0, 48)}`;
}

export function newJournal(fields: Omit<SendJournal, 'version' | 'run' | 'started_at' | 'sent' | 'finished'>): SendJournal {
  return { version: 1, run: randomUUID(), started_at: new Date().toISOString(), sent: [], finished: false, ...fields };
}

/** The journal at `path`, or undefined when there is none. */
export async function readJournal(path: string): Promise<SendJournal | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const journal = JSON.parse(text) as SendJournal;
  if (journal.version !== 1 || !Array.isArray(journal.sent)) throw new Error(`${path} is not a send journal this version of palanque reads`);
  return journal;
}

/** Writes the whole journal (a temporary file renamed over the old one: a reader sees the old or the new). */
export async function writeJournal(path: string, journal: SendJournal): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify(journal, null, 2) + '\n', { mode: 0o600 });
  await rename(temporary, path);
}
