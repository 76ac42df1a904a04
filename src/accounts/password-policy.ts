/**
 * What a new password must be, after OWASP's Authentication Cheat Sheet and NIST SP 800-63B: length
 * over composition. A password is refused only when it is too short or too long, one of the most common
 * passwords, or the account's own name or address; any characters are allowed (spaces, accents, emoji),
 * there are no "one digit, one symbol" rules, and nothing expires. The same rules hold wherever a
 * password is chosen: the API, the admin CLI and the demo seed.
 *
 * The common passwords are the 49,000 of `@zxcvbn-ts/language-common` (compiled from public breaches),
 * loaded the first time a password is checked and compared case-insensitively.
 */
import { createRequire } from 'node:module';

// The package decompresses its lists when loaded (about 60 ms and a few MB): loaded at the first check,
// not at every start of the server or the CLI.
const require = createRequire(import.meta.url);

/** At least 12 characters by default: OWASP's floor is 8 and NIST's 15 for a password used alone; deployments set PASSWORD_MIN_LENGTH. */
export const DEFAULT_MIN_LENGTH = 12;
/** Long passphrases are welcome; the bound keeps a hash's input (and the request body) small. */
export const MAX_LENGTH = 256;

export type PasswordRule = 'min_length' | 'max_length' | 'common_password' | 'account_name';

export interface PasswordProblem {
  rule: PasswordRule;
  message: string;
}

/** The account a password is for, so that its own name and address are refused. */
export interface PasswordContext {
  username?: string;
  email?: string;
}

let common: Set<string> | undefined;

function commonPasswords(): Set<string> {
  if (!common) {
    const { dictionary } = require('@zxcvbn-ts/language-common') as { dictionary: Record<'passwords-common', string[]> };
    common = new Set(dictionary['passwords-common'].map((password) => password.toLowerCase()));
  }
  return common;
}

/** Characters as a person counts them: code points, so that an accent or an emoji is one. */
function lengthOf(password: string): number {
  return [...password].length;
}

/** The first rule the password breaks, or undefined when it is acceptable. */
export function passwordProblem(password: string, context: PasswordContext = {}, minLength = DEFAULT_MIN_LENGTH): PasswordProblem | undefined {
  const length = lengthOf(password);
  if (length < minLength) return { rule: 'min_length', message: `must be at least ${minLength} characters (it has ${length})` };
  if (length > MAX_LENGTH) return { rule: 'max_length', message: `must be at most ${MAX_LENGTH} characters (it has ${length})` };
  const folded = password.trim().toLowerCase();
  if (commonPasswords().has(folded)) return { rule: 'common_password', message: 'is one of the most common passwords; choose a longer phrase of your own' };
  if (accountNames(context).has(folded)) return { rule: 'account_name', message: "must not be the account's username or e-mail address" };
  return undefined;
}

function accountNames({ username, email }: PasswordContext): Set<string> {
  const names = new Set<string>();
  if (username) names.add(username.trim().toLowerCase());
  if (email) {
    const address = email.trim().toLowerCase();
    names.add(address);
    names.add(address.split('@')[0]!);
  }
  return names;
}
