/**
 * Phone numbers as the stateful mock reads and shows them: the server's own rules (@palanque/rules,
 * libphonenumber's full metadata), so that the mock takes, refuses and masks the same numbers with the
 * same details.
 */
import { isBrazilianMobile, maskPhone } from '@palanque/rules/phones';
import { normalisedPhone, readRecipients, recipientListProblems } from '@palanque/rules/recipients';
import type { ErrorDetail } from '../../msw-validation.js';

export { isBrazilianMobile, maskPhone };

/** A contact's number in E.164 (a national number is Brazilian), as the server's createContact reads it. */
export const contactPhone = (text: string): string | undefined => normalisedPhone(text);

/** The numbers of a pasted list, distinct and in order, how many repeats were dropped, and the server's 422 details (src/messaging/campaign-plan.ts). */
export function listedNumbers(list: string): { numbers: string[]; repeated: number; problems: ErrorDetail[] } {
  const recipients = readRecipients(list);
  return { numbers: recipients.numbers, repeated: recipients.repeated, problems: recipientListProblems(recipients, 'mensagem.recipient_list_str') };
}
