/**
 * `sms send` beyond the plain operation: the message and the recipients as options, recipients read from
 * a file, and a bulk send split into campaigns of `--batch-size` entries (one call each, with a progress
 * bar), so that a long list needs no hand-made JSON and stays within the operation's limits.
 *
 * The recipients are sent as written: the server finds the numbers in the text however people write them
 * (`(21) 98765-4321`, `21 98765-4321`, `+55 21 98765-4321`). Only a list longer than a batch is cut, and
 * only where a person separates entries (new lines, commas, semicolons), never inside a number.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from './context.js';
import { UsageError } from './errors.js';
import { jsonOf, printAnswer, printJson, printRows } from './output.js';
import { progressBar } from './progress.js';

export const DEFAULT_BATCH_SIZE = 1000;

export function addBulkSendOptions(command: Command, used: Set<string>): void {
  command
    .option('--message <text>', 'the text of the message (body field mensagem.mensagem)')
    .option('--to <numbers>', 'recipient numbers as people write them, separated by commas, semicolons or new lines: "(21) 98765-4321, 11 91234-5678" (body field mensagem.recipient_list_str)')
    .option('--to-file <path>', 'a file of recipient numbers, one per line (or separated by commas or semicolons); - reads standard input')
    .option('--batch-size <n>', `entries (lines, or items between commas or semicolons) per campaign: a longer list is sent as several campaigns (default ${DEFAULT_BATCH_SIZE})`, (value) => {
      if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('Not a positive integer.');
      return Number(value);
    });
  for (const flag of ['message', 'to', 'to-file', 'batch-size']) used.add(flag);
}

export function bulkSendRequested(options: Record<string, unknown>): boolean {
  return ['message', 'to', 'toFile', 'batchSize'].some((key) => options[key] !== undefined);
}

/** Sends the campaign, split into batches of recipients when the list is longer than the batch size. */
export async function sendInBatches(
  context: Context,
  body: Record<string, unknown>,
  options: Record<string, unknown>,
  send: (campaign: Record<string, unknown>) => Promise<unknown>,
): Promise<void> {
  const mensagem = (body.mensagem && typeof body.mensagem === 'object' ? body.mensagem : {}) as Record<string, unknown>;
  const text = (options.message as string | undefined) ?? (mensagem.mensagem as string | undefined);
  const lists = [typeof mensagem.recipient_list_str === 'string' ? mensagem.recipient_list_str : '', (options.to as string | undefined) ?? ''];
  if (options.toFile !== undefined) lists.push(await readRecipients(options.toFile as string));
  const written = lists.filter((list) => list.trim() !== '').join('\n');
  const entries = recipientEntries(written);
  if (!text) throw new UsageError('sms send needs the message: --message <text> (or mensagem.mensagem in --file/--data)');
  if (entries.length === 0) throw new UsageError('sms send needs recipients: --to <numbers>, --to-file <path> (or mensagem.recipient_list_str in --file/--data)');
  if (body.titulo === undefined || body.credencial === undefined) throw new UsageError('sms send needs --title and --credential (or titulo and credencial in --file/--data)');

  const size = (options.batchSize as number | undefined) ?? DEFAULT_BATCH_SIZE;
  // One campaign gets the text exactly as written; a longer list is cut between entries.
  const batches: string[] = [];
  if (entries.length <= size) batches.push(written);
  else for (let start = 0; start < entries.length; start += size) batches.push(entries.slice(start, start + size).join('\n'));
  const campaignOf = (recipients: string, index: number) => ({
    ...body,
    titulo: batches.length > 1 ? `${String(body.titulo)} (${index + 1}/${batches.length})` : body.titulo,
    mensagem: { ...mensagem, mensagem: text, recipient_list_str: recipients },
  });
  if (batches.length === 1) {
    printAnswer(context.output, await send(campaignOf(batches[0]!, 0)));
    return;
  }

  const progress = progressBar('sending', 'recipients', { json: context.output.json });
  progress.setTotal(entries.length);
  const answers: unknown[] = [];
  try {
    for (const [index, batch] of batches.entries()) {
      answers.push(await send(campaignOf(batch, index)));
      progress.increment(Math.min(size, entries.length - index * size));
    }
  } finally {
    progress.stop();
  }
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
