/**
 * An import whose answer counts rejected lines (`contacts import`, importContacts): the lines that were
 * valid are imported, and the command says which were rejected and why on stderr and exits 5
 * (EXIT.rejected) so that a script notices; `--allow-rejects` accepts them (exit 0).
 */
import type { Command } from 'commander';
import { EXIT, ReportedFailure } from './errors.js';
import type { Output } from './output.js';

export function addRejectOptions(command: Command, used: Set<string>): void {
  used.add('allow-rejects');
  command.option('--allow-rejects', 'exit 0 even when lines were rejected (they are still listed on stderr); without it, rejected lines end the command with exit 5');
}

interface ImportAnswer {
  rows?: number;
  rejected?: number;
  rejections?: Array<{ line?: number; reason?: string; file?: string }>;
}

/** Lists the rejected lines on stderr; exit 5 unless `allowed`. Called after the answer is printed. */
export function refuseRejectedLines(output: Output, answer: unknown, allowed: boolean): void {
  const data = ((answer && typeof answer === 'object' && 'data' in answer ? (answer as { data: unknown }).data : answer) ?? {}) as ImportAnswer;
  const rejected = Number(data.rejected ?? 0);
  if (!(rejected > 0)) return;
  const listed = data.rejections ?? [];
  const lines = listed.map((rejection) => `  line ${rejection.line}: ${rejection.reason}`);
  if (rejected > listed.length) lines.push(`  (and ${rejected - listed.length} more: only the first ${listed.length} are listed)`);
  const summary = `${rejected} of ${data.rows ?? '?'} line(s) rejected, the others imported:\n${lines.join('\n')}`;
  if (allowed) {
    output.stderr.write(`${summary}\n`);
    return;
  }
  throw new ReportedFailure(`${summary}\nFix them and import the file again (lines already imported count unchanged), or pass --allow-rejects to accept this (exit 0).`, EXIT.rejected);
}
