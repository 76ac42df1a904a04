/**
 * The unlock link (`requestLoginUnlock`): the way in for an owner whose name others keep delayed and who
 * has no device token (a seed-only front end, a new browser). Given a username or e-mail, an unlock token
 * is mailed to the address of the active account with that name; a login carrying it is judged as a
 * device's (login-devices.ts). What holds:
 * - the answer is the same, and takes the same time, whether or not the name has an account: the lookup,
 *   the token and the mail all come after the answer (a failure then is logged; the owner asks again);
 * - the token goes only to the account's own address, never to one the caller typed, lives
 *   `unlockLifetimeMs`, works for one successful login and dies after a few failures;
 * - at most one mail per account every `unlockResendMs`, so the address cannot be flooded through it;
 *   the request itself pays the budget of the authentication operations per address, as a reset does.
 */
import { runAfterAnswer } from '../http/after-answer.js';
import type { Logger } from '../logger.js';
import type { Mailer } from '../mail/mailer.js';
import type { LoginDevices } from './login-devices.js';
import type { UserDirectory } from './users.js';

export interface UnlockLinks {
  /** Where the mail sends its reader: a front-end login page with the token, or undefined to give the token only. */
  loginUrl(token: string): string | undefined;
}

export class LoginUnlocks {
  constructor(
    private readonly users: Pick<UserDirectory, 'byLoginName'>,
    private readonly devices: LoginDevices,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
  ) {}

  /** Mails an unlock token to the account the name belongs to, if any, after the answer. */
  request(loginName: string, links: UnlockLinks): void {
    runAfterAnswer(this.logger, 'could not mail an unlock link', () => this.issueAndMail(loginName, links));
  }

  private async issueAndMail(loginName: string, links: UnlockLinks): Promise<void> {
    const user = await this.users.byLoginName(loginName);
    if (!user?.is_active) return;
    const issued = await this.devices.issueUnlock(user.id);
    if (!issued) return;
    const link = links.loginUrl(issued.token);
    await this.mailer.send({
      to: user.email,
      subject: 'Palanque: log in without waiting',
      text:
        `Hello ${user.first_name || user.username},\n\n` +
        `Someone (hopefully you) asked to log in to your Palanque account without waiting for the delay\n` +
        `that failed attempts at its name impose. Log in with your password and this unlock token:\n\n` +
        `Unlock token: ${issued.token}\n\n` +
        (link ? `Or open this address to log in with it:\n${link}\n\n` : '') +
        `The token works for one login, until ${issued.expiresAt.toISOString()}. It does not replace your password.\n` +
        `If you did not ask for it, ignore this message. If the failed attempts are not yours, someone is guessing\n` +
        `at your password: choose a long one of your own.\n`,
    });
  }
}
