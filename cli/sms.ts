/**
 * `sms send` beyond the plain operation: the message and the recipients as options, recipients read from
 * a file, and a bulk send split into campaigns of `--batch-size` numbers (one call each, with a progress
 * bar), so that a long list needs no hand-made JSON and stays within the operation's limits.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from './context.js';
import { UsageError } from './errors.js';
import { printAnswer, printJson, printRows } from './output.js';
import { progressBar } from './progress.js';

export const DEFAULT_BATCH_SIZE = 1000;

export function addBulkSendOptions(command: Command, used: Set<string>): void {
  command
    .option('--message <text>', 'the text of the message (body field mensagem.mensagem)')
    .option('--to <numbers>', 'recipient numbers separated by commas, semicolons or spaces (body field mensagem.recipient_list_str)')
    .option('--to-file <path>', 'a file of recipient numbers, one per line (or separated by commas, semicolons or spaces); - reads standard input')
    .option('--batch-size <n>', `recipients per campaign: a longer list is sent as several campaigns (default ${DEFAULT_BATCH_SIZE})`, (value) => {
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
  const recipients = lists.join('\n').split(/[\s,;]+/).filter(Boolean);
  if (!text) throw new UsageError('sms send needs the message: --message <text> (or mensagem.mensagem in --file/--data)');
  if (recipients.length === 0) throw new UsageError('sms send needs recipients: --to <numbers>, --to-file <path> (or mensagem.recipient_list_str in --file/--data)');
  if (body.titulo === undefined || body.credencial === undefined) throw new UsageError('sms send needs --title and --credential (or titulo and credencial in --file/--data)');

  const size = (options.batchSize as number | undefined) ?? DEFAULT_BATCH_SIZE;
  const batches: string[][] = [];
  for (let start = 0; start < recipients.length; start += size) batches.push(recipients.slice(start, start + size));
  const campaignOf = (batch: string[], index: number) => ({
    ...body,
    titulo: batches.length > 1 ? `${String(body.titulo)} (${index + 1}/${batches.length})` : body.titulo,
    mensagem: { ...mensagem, mensagem: text, recipient_list_str: batch.join(',') },
  });
  if (batches.length === 1) {
    printAnswer(context.output, await send(campaignOf(batches[0]!, 0)));
    return;
  }

  const progress = progressBar('sending', 'recipients', { json: context.output.json });
  progress.setTotal(recipients.length);
  const answers: unknown[] = [];
  try {
    for (const [index, batch] of batches.entries()) {
      answers.push(await send(campaignOf(batch, index)));
      progress.increment(batch.length);
    }
  } finally {
    progress.stop();
  }
  if (context.output.json) {
    printJson(context.output, answers);
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
