/**
 * `sms send` beyond the plain operation: the message and the recipients as options, recipients read from
 * a file, and a bulk send split into campaigns of `--batch-size` entries (one call each, with a progress
 * bar), so that a long list needs no hand-made JSON and stays within the operation's limits.
 *
 * The recipients are sent as written: the server finds the numbers in the text however people write them
 * (`(21) 98765-4321`, `21 98765-4321`, `+55 21 98765-4321`). Only a list longer than a batch is cut, and
 * only where a person separates entries (new lines, commas, semicolons), never inside a number.
 *
 * A bulk send (more than one batch) holds these (issue 41):
 * - the whole list is read and checked before the first batch goes: the server's preview judges every
 *   number (previewSmsCampaign), and a list with a bad entry, or one the entity's rules would refuse,
 *   sends nothing;
 * - each batch carries an Idempotency-Key derived from the run, the text, the credential and its
 *   recipients, and each batch sent is recorded in a journal (send-journal.ts), so `--resume` continues
 *   an interrupted or failed send where it stopped and never sends a batch twice;
 * - every campaign is printed as soon as the server created it;
 * - Ctrl-C (SIGINT) stops between batches: what went out and how to resume are printed, exit 130 (a
 *   second Ctrl-C stops at once; the batch then in flight is resumed under the same key);
 * - a failure on a later batch prints what went out before the error, and how to resume.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { PalanqueApiError } from '../sdk/index.js';
import type { Context } from './context.js';
import { EXIT, ReportedFailure, UsageError } from './errors.js';
import { jsonOf, printAnswer, printJson, printRows } from './output.js';
import { progressBar } from './progress.js';
import { batchIdempotencyKey, journalPathOf, newJournal, readJournal, writeJournal, type SendJournal } from './send-journal.js';

export const DEFAULT_BATCH_SIZE = 1000;
/** The most entries one preview judges (well under the server's SMS_MAX_RECIPIENTS, 10,000 by default). */
const PREVIEW_ENTRIES = 1000;
/** The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const EXIT_INTERRUPTED = 130;

export function addBulkSendOptions(command: Command, used: Set<string>): void {
  command
    .option('--message <text>', 'the text of the message (body field mensagem.mensagem)')
    .option('--to <numbers>', 'recipient numbers as people write them, separated by commas, semicolons or new lines: "(21) 98765-4321, 11 91234-5678" (body field mensagem.recipient_list_str)')
    .option('--to-file <path>', 'a file of recipient numbers, one per line (or separated by commas or semicolons); - reads standard input')
    .option('--batch-size <n>', `entries (lines, or items between commas or semicolons) per campaign: a longer list is sent as several campaigns (default ${DEFAULT_BATCH_SIZE})`, (value) => {
      if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('Not a positive integer.');
      return Number(value);
    })
    .option('--resume', 'continue a batched send of the same list, text and credential that was interrupted or failed, from the first batch that did not go out');
  for (const flag of ['message', 'to', 'to-file', 'batch-size', 'resume']) used.add(flag);
}

export function bulkSendRequested(options: Record<string, unknown>): boolean {
  return ['message', 'to', 'toFile', 'batchSize', 'resume'].some((key) => options[key] !== undefined);
}

/** The calls a bulk send makes: a batch's campaign with its idempotency key, and the preview of some recipients. */
export interface BulkSendCalls {
  send(campaign: Record<string, unknown>, idempotencyKey: string): Promise<unknown>;
  preview(campaign: Record<string, unknown>): Promise<unknown>;
}

type Campaign = Record<string, unknown>;

/** Sends the campaign, split into batches of recipients when the list is longer than the batch size. */
export async function sendInBatches(context: Context, body: Record<string, unknown>, options: Record<string, unknown>, calls: BulkSendCalls): Promise<void> {
  const mensagem = (body.mensagem && typeof body.mensagem === 'object' ? body.mensagem : {}) as Record<string, unknown>;
  const text = (options.message as string | undefined) ?? (mensagem.mensagem as string | undefined);
  const lists = [typeof mensagem.recipient_list_str === 'string' ? mensagem.recipient_list_str : '', (options.to as string | undefined) ?? ''];
  if (options.toFile !== undefined) lists.push(await readRecipients(options.toFile as string));
  const written = lists.filter((list) => list.trim() !== '').join('\n');
  const entries = recipientEntries(written);
  if (!text) throw new UsageError('sms send needs the message: --message <text> (or mensagem.mensagem in --file/--data)');
  if (entries.length === 0) throw new UsageError('sms send needs recipients: --to <numbers>, --to-file <path> (or mensagem.recipient_list_str in --file/--data)');
  // Only what is missing is named: a user who gave --credential must not be told to give it.
  const missing = [['titulo', '--title'], ['credencial', '--credential']].filter(([field]) => body[field!] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`sms send needs ${missing.map(([, flag]) => flag).join(' and ')} (or ${missing.map(([field]) => field).join(' and ')} in --file/--data)`);
  }

  const identity = { recipients: written, text, credential: Number(body.credencial) };
  const journalPath = journalPathOf(context.configFile, identity);
  const earlier = options.resume ? await resumable(journalPath, options) : undefined;
  const size = earlier?.batch_size ?? (options.batchSize as number | undefined) ?? DEFAULT_BATCH_SIZE;
  const batches = cut(entries, size);
  const campaignOf = (index: number): Campaign => ({
    ...body,
    titulo: batches.length > 1 ? `${String(body.titulo)} (${index + 1}/${batches.length})` : body.titulo,
    mensagem: { ...mensagem, mensagem: text, recipient_list_str: batches.length > 1 ? batches[index]!.join('\n') : written },
  });
  if (batches.length === 1 && !earlier) {
    // One campaign: the server judges it whole and sends all or nothing; nothing to journal.
    printAnswer(context.output, await calls.send(campaignOf(0), batchIdempotencyKey(randomUUID(), text, identity.credential, written)));
    return;
  }

  const journal = earlier ?? newJournal({ title: String(body.titulo), credential: identity.credential, batch_size: size, batches: batches.length, entries: entries.length });
  const done = new Set(journal.sent.map((sent) => sent.batch));
  const pending = batches.map((_, index) => index).filter((index) => !done.has(index + 1));
  const interruption = interruptible();
  try {
    await checkBeforeSending(calls, pending.map(campaignOf), batches.length);
  } catch (error) {
    interruption.release();
    throw error;
  }
  if (interruption.requested) {
    interruption.release();
    throw new ReportedFailure('Stopped by Ctrl-C while the list was checked: this run sent no batch.', EXIT_INTERRUPTED);
  }
  await writeJournal(journalPath, journal);
  if (earlier) context.output.stderr.write(`Resuming: ${done.size} of ${batches.length} batches went out before; sending the other ${pending.length}.\n`);

  const progress = progressBar('sending', 'recipients', { json: context.output.json });
  progress.setTotal(entries.length);
  progress.increment(journal.sent.reduce((sum, sent) => sum + batches[sent.batch - 1]!.length, 0));
  const answers: unknown[] = [];
  try {
    for (const index of pending) {
      if (interruption.requested) break;
      const campaign = campaignOf(index);
      const key = batchIdempotencyKey(journal.run, text, identity.credential, batches[index]!.join('\n'));
      let answer: unknown;
      try {
        answer = await calls.send(campaign, key);
      } catch (error) {
        if (!allOptedOut(error)) {
          progress.stop();
          reportSoFar(context, journal, answers, `Batch ${index + 1} of ${batches.length} failed`);
          throw error;
        }
        answer = undefined; // the server sent nothing: every number of the batch opted out
      }
      const data = (answer as { data?: Campaign } | undefined)?.data;
      journal.sent.push({ batch: index + 1, campaign: data ? Number(data.id) : null, accepted: Number(data?.accepted ?? 0), idempotency_key: key });
      await writeJournal(journalPath, journal);
      if (answer !== undefined) answers.push(answer);
      progress.increment(batches[index]!.length);
      announce(context, index + 1, batches.length, data);
    }
  } finally {
    progress.stop();
    interruption.release();
  }
  if (interruption.requested && journal.sent.length < batches.length) {
    reportSoFar(context, journal, answers, 'Interrupted');
    throw new ReportedFailure(`Stopped by Ctrl-C before batch ${journal.sent.length + 1} of ${batches.length}.`, EXIT_INTERRUPTED);
  }
  journal.finished = true;
  await writeJournal(journalPath, journal);
  printCampaigns(context, answers);
}

/** The journal `--resume` continues; a usage error when there is none, or when it is finished or cut otherwise. */
async function resumable(path: string, options: Record<string, unknown>): Promise<SendJournal> {
  const journal = await readJournal(path);
  if (!journal) throw new UsageError('--resume: no batched send of this list, text and credential was recorded here (send it without --resume)');
  if (options.batchSize !== undefined && options.batchSize !== journal.batch_size) {
    throw new UsageError(`--resume: that send was cut in batches of ${journal.batch_size}; resume it with the same --batch-size (or without one)`);
  }
  if (journal.finished) throw new UsageError(`--resume: every batch of that send went out already (campaigns ${campaignIds(journal)}); send it without --resume to send it again`);
  return journal;
}

/** Batches of `size` entries, in order. */
function cut(entries: string[], size: number): string[][] {
  const batches: string[][] = [];
  for (let start = 0; start < entries.length; start += size) batches.push(entries.slice(start, start + size));
  return batches;
}

/**
 * Every batch still to send, judged by the server's preview (several batches a call, up to
 * PREVIEW_ENTRIES entries) before the first goes: every bad entry of the whole list is reported, and a
 * campaign the entity's rules would refuse stops the send, with nothing sent.
 */
async function checkBeforeSending(calls: BulkSendCalls, campaigns: Campaign[], total: number): Promise<void> {
  const problems: string[] = [];
  const recipientsOf = (campaign: Campaign) => String((campaign.mensagem as Record<string, unknown>).recipient_list_str);
  for (let start = 0; start < campaigns.length; ) {
    const group = [campaigns[start]!];
    let count = recipientEntries(recipientsOf(group[0]!)).length;
    while (start + group.length < campaigns.length) {
      const next = recipientEntries(recipientsOf(campaigns[start + group.length]!)).length;
      if (count + next > PREVIEW_ENTRIES) break;
      group.push(campaigns[start + group.length]!);
      count += next;
    }
    start += group.length;
    const judged = { ...group[0]!, mensagem: { ...(group[0]!.mensagem as object), recipient_list_str: group.map(recipientsOf).join('\n') } };
    try {
      const preview = ((await calls.preview(judged)) as { data?: { compliance?: { would_refuse?: boolean; warnings?: Array<{ rule?: string; message?: string }> } } }).data;
      if (preview?.compliance?.would_refuse) {
        const rules = [...new Set(preview.compliance.warnings?.map((warning) => warning.rule))].join(', ');
        throw new ReportedFailure(`Nothing was sent: the entity's rules (mode enforce) would refuse this campaign: ${rules} (see palanque sms preview).`, EXIT.api);
      }
    } catch (error) {
      if (!(error instanceof PalanqueApiError) || error.status !== 422) throw error;
      for (const detail of error.details) problems.push(`  - ${[detail.field, detail.message].filter(Boolean).join(': ')}${detail.value !== undefined ? ` (value: ${JSON.stringify(detail.value)})` : ''}${detail.rule ? ` [${detail.rule}]` : ''}`);
      if (error.details.length === 0) problems.push(`  - ${error.message}`);
    }
  }
  if (problems.length > 0) {
    throw new ReportedFailure(`Nothing was sent: the server's preview refused entries of the list (${total} batches checked before sending):\n${problems.join('\n')}`, EXIT.api);
  }
}

/** A batch the server refused because every number in it opted out: nothing was sent, and the send goes on. */
function allOptedOut(error: unknown): boolean {
  return error instanceof PalanqueApiError && error.status === 422 && error.details.length > 0 && error.details.every((detail) => detail.rule === 'not_opted_out');
}

/** A line as soon as a batch's campaign exists: on stdout, or on stderr under --json (whose stdout is one JSON document). */
function announce(context: Context, batch: number, total: number, campaign: Campaign | undefined): void {
  const line = campaign
    ? `Campaign ${String(campaign.id)} created (batch ${batch}/${total}): ${Number(campaign.accepted ?? 0)} accepted, ${Number(campaign.rejected ?? 0)} rejected, ${Number(campaign.opted_out_skipped ?? 0)} opted out.\n`
    : `Batch ${batch}/${total} sent nothing: every number in it opted out.\n`;
  (context.output.json ? context.output.stderr : context.output.stdout).write(line);
}

/** What went out before a stop or a failure, and the command that sends the rest; the campaigns of this run as JSON under --json. */
function reportSoFar(context: Context, journal: SendJournal, answers: unknown[], what: string): void {
  if (context.output.json) printJson(context.output, answers.map((answer) => jsonOf(context.output, answer)));
  const accepted = journal.sent.reduce((sum, sent) => sum + sent.accepted, 0);
  const sent = journal.sent.length === 0 ? 'no batch went out' : `${journal.sent.length} of ${journal.batches} batches went out (${accepted} messages accepted; campaigns ${campaignIds(journal)})`;
  context.output.stderr.write(`${what}: ${sent}.\nTo send the rest: ${resumeCommand()}\n`);
}

function campaignIds(journal: SendJournal): string {
  return journal.sent.flatMap((sent) => (sent.campaign === null ? [] : [String(sent.campaign)])).join(', ') || 'none';
}

/** This command line with --resume, quoted for a POSIX shell. */
function resumeCommand(): string {
  const args = process.argv.slice(2).filter((arg) => arg !== '--resume');
  const quoted = [...args, '--resume'].map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`));
  return `palanque ${quoted.join(' ')}`;
}

/** Ctrl-C asks the loop to stop after the batch in flight; a second one stops at once. */
function interruptible(): { readonly requested: boolean; release(): void } {
  let requested = false;
  const onSignal = () => {
    if (requested) process.exit(EXIT_INTERRUPTED);
    requested = true;
    process.stderr.write('Stopping before the next batch (Ctrl-C again to stop at once)...\n');
  };
  process.on('SIGINT', onSignal);
  return {
    get requested() {
      return requested;
    },
    release: () => void process.off('SIGINT', onSignal),
  };
}

/** The campaigns of a finished bulk send: a table and a total, or their JSON. */
function printCampaigns(context: Context, answers: unknown[]): void {
  if (context.output.json) {
    printJson(context.output, answers.map((answer) => jsonOf(context.output, answer)));
    return;
  }
  const campaigns = answers.map((answer) => (answer as { data?: Record<string, unknown> }).data ?? {});
  printRows(
    context.output,
    campaigns.map(({ id, titulo, accepted, rejected, opted_out_skipped, segments, state }) => ({ id, titulo, accepted, rejected, opted_out_skipped, segments, state })),
  );
  const total = (key: string) => campaigns.reduce((sum, campaign) => sum + (Number(campaign[key]) || 0), 0);
  context.output.stdout.write(
    `${campaigns.length} campaigns: ${total('accepted')} accepted, ${total('rejected')} rejected, ${total('opted_out_skipped')} opted out\n`,
  );
}

/** The entries of a list as a person separates them: lines, and items between commas or semicolons (a number may hold spaces). */
export function recipientEntries(text: string): string[] {
  return text
    .split(/[\r\n,;]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

async function readRecipients(path: string): Promise<string> {
  if (path === '-') {
    const { readStdin } = await import('./input.js');
    return readStdin();
  }
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--to-file: cannot read ${path}: ${(error as Error).message}`);
  }
}
