/**
 * Commands renamed since they were documented, kept under their former name (hidden from the help and
 * the completion) so that old notes and scripts still work: each runs its operation exactly as the new
 * name does (same options, same output, --json included) and first writes a note on stderr saying the
 * new name and what the operation does now.
 */
import type { OperationId } from './operations.js';

export interface FormerCommand {
  /** The former group and command. */
  path: readonly [string, string];
  operationId: OperationId;
  /** The note on stderr, from the command's options. */
  note(options: Record<string, unknown>): string;
}

export const FORMER_COMMANDS: readonly FormerCommand[] = [
  {
    // Until issue 21 addOperator put a user into a team at once; since then it invites, and the person
    // joins only by accepting (src/entities/invitations.ts).
    path: ['operators', 'add'],
    operationId: 'addOperator',
    note: (options) => {
      const entity = options.entityId === undefined ? '<id>' : String(options.entityId);
      const who = typeof options.email === 'string' ? options.email : 'the address';
      return (
        `Note: \`palanque operators add\` is now \`palanque invitations send\`. Nobody is added to a team directly any more: ` +
        `this invites ${who} by e-mail, and the person joins entity ${entity}'s team only by accepting ` +
        `(palanque invitations accept, or the e-mail's link; an address without an account signs up through it first). ` +
        `Follow it with: palanque invitations list --entity-id ${entity} (withdraw with palanque invitations withdraw).\n`
      );
    },
  },
];
