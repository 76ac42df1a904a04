/** What a sandbox prints at start, for `npm run sandbox` and `npm run dev:hybrid -- --sandbox` alike. */
import { SANDBOX_ELECTIONS_TOKEN, SANDBOX_SMS_PRICE, SANDBOX_SOCIALNET_APP_SECRET, SANDBOX_SOCIALNET_VERIFY_TOKEN, type Sandbox } from './sandbox.js';

export function bannerOf(sandbox: Sandbox): string {
  const width = Math.max(...sandbox.users.map((user) => user.username.length));
  const lines = [
    '',
    `Palanque sandbox on ${sandbox.url}  (a temporary SQLite database with the demo data of fixtures/)`,
    '',
    'Demo users (password, then an API key: Authorization: Token <key>):',
    ...sandbox.users.map((user) => `  ${user.username.padEnd(width)}  ${user.password}  ${user.key}${user.isAdmin ? '  (admin)' : ''}`),
    sandbox.demoKeys === 'fixed'
      ? 'These keys are the same at every start (SANDBOX_DEMO_KEYS=fixed, derived from SANDBOX_PASSWORD): for this machine only.'
      : 'These keys are new at every start; SANDBOX_DEMO_KEYS=fixed keeps them the same across restarts.',
    '',
    sandbox.corsOrigins.length > 0
      ? `Browser front ends on ${sandbox.corsOrigins.join(', ')} may call it (CORS_ORIGINS changes the list).`
      : 'No browser origin may call it (CORS_ORIGINS is empty).',
    '',
    `Reset to the demo data: POST ${sandbox.url}/api/testes/reset_sandbox/ as an admin, or \`palanque sandbox reset\`.`,
    'The demo users, their passwords and these keys survive every reset; everything else written is undone.',
  ];
  const simulators = sandbox.simulators;
  if (simulators) {
    lines.push(
      '',
      'Simulated providers (on loopback, nothing leaves this machine):',
      `  SMS provider     ${simulators.sms.url}  delivers every message (priced ${SANDBOX_SMS_PRICE.unit} ${(-Number(SANDBOX_SMS_PRICE.perSegment)).toFixed(2)} a segment); a recipient answers with`,
      `                   curl -d '{"from":"+5511987654321","body":"SAIR"}' ${simulators.sms.url}/sandbox/replies`,
      `  messenger        ${simulators.messenger.url}  takes any connected Page's answers and delivers them; a person writes to a Page with`,
      `                   curl -d '{"page_id":"<page id>","sender_id":"6543210987654321","text":"Oi!"}' ${simulators.messenger.url}/sandbox/messages`,
      `  elections panel  ${simulators.electionsPanel.url}  elections_token: ${SANDBOX_ELECTIONS_TOKEN}`,
      `  searchnet OAuth  ${simulators.searchnet.url}  consents at once as a demo account`,
      `  video OAuth      ${simulators.socialVideo.url}  consents at once as a demo account`,
      '                   the callback answers a pending link: POST its pending_link_id to confirm_url with your key',
    );
  }
  lines.push('', `Social network webhook: hub.verify_token ${SANDBOX_SOCIALNET_VERIFY_TOKEN}, app secret ${SANDBOX_SOCIALNET_APP_SECRET}.`, 'Ctrl-C stops the sandbox and deletes its database.', '');
  return lines.join('\n');
}
