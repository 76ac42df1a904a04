/**
 * Every operation of the contract as a command. cli/spec-operations.ts (generated from the spec) says
 * what each operation takes; this table gives it a human command name, grouped like the spec's tags,
 * with examples. The table is typed by the SDK's generated `operations`, so an operation added to the
 * spec without a command here does not compile, and test/cli.test.ts checks the built command tree
 * against the spec itself.
 */
import type { operations } from '../sdk/index.js';

export type OperationId = keyof operations;

export interface CommandName {
  /** `[group, command]`, or `[command]` for a top-level one. */
  path: readonly [string] | readonly [string, string];
  /** Flag names that differ from the API's parameter or field name (`codigo_uf` is `--uf`). */
  flags?: Readonly<Record<string, string>>;
  /** Example command lines, shown by `--help` (without the leading `palanque`). */
  examples?: readonly string[];
  /** Handled by a command of its own (login, logout), not the generic one. */
  custom?: true;
}

/** Group names and what they hold, in `--help` order. */
export const GROUPS: Readonly<Record<string, string>> = {
  auth: 'Sessions, keys, password resets and credential checks (Login/Register)',
  sessions: "Your own keys, one per device that logged in: list and revoke (Login/Register)",
  signup: 'Sign up for an account and confirm its e-mail address (Login/Register)',
  audit: 'The audit log of security events, for platform admins (Accounts)',
  accounts: 'User accounts and profiles (Accounts)',
  chat: 'Chat contacts (chat)',
  social: "The caller's linked social accounts (Social Networks)",
  entities: 'Candidates, competitors and parties (entidades)',
  competitors: 'Guardianship links between players (concorrentes)',
  operators: "An entity's team (equipe/operadores)",
  invitations: 'Invitations to teams: send, answer, withdraw (equipe/operadores)',
  monitors: 'Social monitors and their metrics (monitor_social)',
  strategy: 'Strategy scenario requests (Evaluation)',
  research: 'Research bookmarks (research)',
  news: 'News sources requested for monitoring (news)',
  sms: 'SMS credentials and campaigns (SMS)',
  inbox: "An entity's chat inbox: conversations with voters who wrote by SMS or to its messenger Pages, their threads, replies, read marks, assignments, the changes cursor (chat), and its Pages (chatMessenger)",
  notifications: 'Your notifications: list, unread count, mark read (notifications)',
  push: "Push notifications to your devices: the deployment's key, your subscriptions (push notifications)",
  contacts: "An entity's contacts and the consent each gave: list, add, import from CSV, remove, erase (SMS)",
  elections: "The electoral court's elections, candidacies, parties and code tables, and syncs with the elections panel (Elections, Candidato, Partidos)",
  municipios: 'The 5,570 Brazilian municipalities (Location)',
  callbacks: 'Provider callbacks and webhooks, as a provider would call them (callbacks, webhooks)',
  webhooks: "An entity's outbound webhooks: endpoints, signed deliveries and their log, tests and resends (webhooks)",
  jobs: "Background jobs by queue and state, one more try for a dead job, the purge of a canceled campaign's jobs, for platform admins (controle)",
  docs: "The API's own documentation (docs)",
  sandbox: "A sandbox server's demo data (testes)",
};

export const COMMANDS: Readonly<Record<OperationId, CommandName>> = {
  // Login/Register
  login: { path: ['login'], custom: true },
  logout: { path: ['logout'], custom: true },
  removeToken: { path: ['auth', 'remove-token'], flags: { token_key: 'key' }, examples: ['auth remove-token --key plq_...'] },
  checkCredential: { path: ['auth', 'check-credential'], examples: ['auth check-credential --file credentials.json'] },
  generateNewPassword: {
    path: ['auth', 'reset-password'],
    examples: ['auth reset-password --email ana.souza@palanque.app   # mails a reset link', 'auth reset-password --email ana.souza@palanque.app --token <token from the mail>'],
  },
  validatePasswordResetToken: { path: ['auth', 'check-reset-token'], examples: ['auth check-reset-token --email ana.souza@palanque.app --token <token>'] },
  checkEmail: { path: ['auth', 'check-email'], examples: ['auth check-email --email nova.pessoa@exemplo.com.br'] },
  checkLoginAttempt: { path: ['auth', 'login-attempt'], examples: ['auth login-attempt'] },
  requestLoginUnlock: {
    path: ['auth', 'unlock'],
    examples: ['auth unlock --username ana.souza   # mails an unlock token; then: palanque login -u ana.souza --unlock-token <token>'],
  },
  signUp: {
    path: ['signup', 'create'],
    examples: [
      'signup create --file signup.json   # {"username": ..., "email": ..., "password": ...}: keeps the password out of the shell history',
      'signup create --username rafael.costa --email rafael.costa@exemplo.com.br --first-name Rafael --password "$PASSWORD" --invitation <token>',
    ],
  },
  resendSignUpConfirmation: { path: ['signup', 'resend'], examples: ['signup resend --email rafael.costa@exemplo.com.br   # at most one link a minute'] },
  verifyEmail: { path: ['signup', 'verify'], examples: ['signup verify --token <token from the mailed link>'] },
  changePassword: { path: ['password'], custom: true },
  changeMyEmail: { path: ['accounts', 'change-email'], examples: ['accounts change-email --file change.json   # {"new_email": ..., "current_password": ...}'] },
  listMySessions: { path: ['sessions', 'list'], examples: ['sessions list', 'sessions list --json   # ids, devices, last use'] },
  revokeMySession: { path: ['sessions', 'revoke'], examples: ['sessions revoke 41   # the id sessions list shows'] },
  // Accounts, chat, social networks
  listUsers: { path: ['accounts', 'list'], examples: ['accounts list', 'accounts list --all --json'] },
  getUser: { path: ['accounts', 'get'], examples: ['accounts get 1'] },
  createUser: {
    path: ['accounts', 'create'],
    examples: ['accounts create --username joana.lima --email joana.lima@palanque.app --first-name Joana   # she gets a link by mail', 'accounts create --file user.json'],
  },
  deactivateUser: { path: ['accounts', 'deactivate'], examples: ['accounts deactivate 2   # keys revoked, no more logins'] },
  reactivateUser: { path: ['accounts', 'reactivate'], examples: ['accounts reactivate 2'] },
  endUserSessions: { path: ['accounts', 'end-sessions'], examples: ['accounts end-sessions 2   # every device logs in again'] },
  getMyProfile: { path: ['accounts', 'me'], examples: ['accounts me', 'accounts me --json'] },
  listAuditEvents: { path: ['audit', 'list'], examples: ['audit list --event login_failed --since 2026-11-26T00:00:00Z', 'audit list --user-id 2 --json'] },
  exportMyData: { path: ['accounts', 'my-data'], examples: ['accounts my-data --json > my-data.json   # everything held about you (LGPD)'] },
  deleteMyAccount: {
    path: ['accounts', 'delete-me'],
    examples: ['accounts delete-me --file delete.json   # {"current_password": ..., "confirm": "DELETE"}: keeps the password out of the shell history (LGPD erasure)'],
  },
  updateMyProfile: {
    path: ['accounts', 'update-me'],
    examples: ['accounts update-me --phone "(11) 98765-4321"', 'accounts update-me --last-name "Pereira da Silva"', 'accounts update-me --data \'{"phone":null}\'   # removes the phone'],
  },
  listChatContacts: { path: ['chat', 'contacts'], examples: ['chat contacts --only-team true'] },
  listUserSocialLogins: { path: ['social', 'logins'], examples: ['social logins'] },
  startSocialLogin: { path: ['social', 'link'], examples: ['social link --provider searchnet'] },
  listPendingSocialLogins: { path: ['social', 'pending'], examples: ['social pending'] },
  confirmSocialLogin: { path: ['social', 'confirm'], examples: ['social confirm --pending-link-id 7c9e6679-7425-40de-944b-e07fc1f90ae7'] },
  // Entities and teams
  listEntities: { path: ['entities', 'list'], examples: ['entities list --tp candidato', 'entities list --all --json'] },
  getEntity: {
    path: ['entities', 'get'],
    examples: ['entities get --id 12', 'entities get --id 12 --json > candidate.json   # its data, which entities add --file takes back'],
  },
  addEntity: {
    path: ['entities', 'add'],
    examples: [
      'entities add --tp candidato --file candidate.json',
      'entities add --file candidate.json   # a file from entities get --json: its id makes it an update',
      'entities add --tp partido --data \'{"nome":"Partido Exemplo","partido":"99"}\'',
    ],
  },
  createEntityFromCandidacy: {
    path: ['entities', 'from-candidacy'],
    examples: [
      'entities from-candidacy --candidacy-id 501   # the team\'s candidate, filled in from the court\'s candidacy',
      'entities from-candidacy --tp concorrente --candidacy-id 502',
    ],
  },
  listEntityHistory: {
    path: ['history'],
    examples: ['history --id 12', 'history --id 12 --subject team --all --json'],
  },
  erasePersonalData: {
    path: ['entities', 'erase-personal-data'],
    examples: [
      'entities erase-personal-data --entity-id 13 --reason "LGPD-2026-0042"   # every personal field',
      'entities erase-personal-data --data \'{"entity_id":13,"fields":["cpf","titulo_eleitor"],"reason":"LGPD-2026-0042"}\'',
    ],
  },
  correctPersonalData: {
    path: ['entities', 'correct-personal-data'],
    examples: ['entities correct-personal-data --data \'{"entity_id":13,"changes":{"cpf":"111.444.777-35"},"reason":"LGPD-2026-0043"}\''],
  },
  manageGuardianship: {
    path: ['competitors', 'guardianship'],
    examples: ['competitors guardianship --tutor 12', 'competitors guardianship --tutor 12 --ward 15 --action add'],
  },
  listWardLinks: { path: ['competitors', 'watchers'], examples: ['competitors watchers --id 13   # the links that point at entity 13'] },
  removeWardLink: { path: ['competitors', 'remove-watcher'], examples: ['competitors remove-watcher --entity-id 13 --link-id 7'] },
  listOperators: { path: ['operators', 'list'], examples: ['operators list --id 12'] },
  addOperator: { path: ['invitations', 'send'], examples: ['invitations send --entity-id 12 --email joana.lima@exemplo.com.br --role operator   # she joins when she accepts'] },
  listTeamInvitations: { path: ['invitations', 'list'], examples: ['invitations list --entity-id 12', 'invitations list --entity-id 12 --state pending'] },
  listMyInvitations: { path: ['invitations', 'mine'], examples: ['invitations mine'] },
  acceptInvitation: { path: ['invitations', 'accept'], examples: ['invitations accept --id 9'] },
  declineInvitation: { path: ['invitations', 'decline'], examples: ['invitations decline --id 9'] },
  withdrawInvitation: { path: ['invitations', 'withdraw'], examples: ['invitations withdraw --entity-id 12 --id 9'] },
  removeOperator: { path: ['operators', 'remove'], examples: ['operators remove --entity-id 12 --user-id 3'] },
  checkOperatorEmail: { path: ['operators', 'check-email'], examples: ['operators check-email --entity-id 12 --email carlos.pereira@palanque.app'] },
  // Monitors and strategy
  getSocialMonitorData: { path: ['monitors', 'data'], examples: ['monitors data', 'monitors data --id-monitor 4'] },
  createSocialMonitor: { path: ['monitors', 'add'], examples: ['monitors add --file monitor.json'] },
  importMonitorMetrics: { path: ['monitors', 'import-metrics'], examples: ['monitors import-metrics --file snapshots.json'] },
  listMonitorAlertRules: { path: ['monitors', 'alert-rules'], examples: ['monitors alert-rules --monitor-id 4'] },
  addMonitorAlertRule: {
    path: ['monitors', 'add-alert-rule'],
    examples: ['monitors add-alert-rule --monitor-id 4 --kind followers_drop --network instagram --threshold 5   # followers down 5% in a day', 'monitors add-alert-rule --monitor-id 4 --kind mentions_spike --threshold 3'],
  },
  removeMonitorAlertRule: { path: ['monitors', 'remove-alert-rule'], examples: ['monitors remove-alert-rule 3'] },
  // Notifications and push
  listNotifications: { path: ['notifications', 'list'], examples: ['notifications list', 'notifications list --unread-only true --all --json'] },
  countUnreadNotifications: { path: ['notifications', 'unread'], examples: ['notifications unread'] },
  markNotificationRead: { path: ['notifications', 'read'], examples: ['notifications read 58'] },
  markAllNotificationsRead: { path: ['notifications', 'read-all'], examples: ['notifications read-all'] },
  getPushPublicKey: { path: ['push', 'public-key'], examples: ['push public-key   # the applicationServerKey for pushManager.subscribe()'] },
  listPushSubscriptions: { path: ['push', 'list'], examples: ['push list'] },
  addPushSubscription: { path: ['push', 'subscribe'], examples: ['push subscribe --file subscription.json   # what PushSubscription.toJSON() gives'] },
  removePushSubscription: { path: ['push', 'unsubscribe'], examples: ['push unsubscribe 6'] },
  // Outbound webhooks
  listWebhookEndpoints: { path: ['webhooks', 'list'], examples: ['webhooks list --entity-id 12'] },
  addWebhookEndpoint: {
    path: ['webhooks', 'add'],
    examples: ['webhooks add --data \'{"entity_id":12,"url":"https://crm.example.org/palanque","event_types":["sms_campaign.completed","monitor.alert"]}\'   # prints the secret once'],
  },
  updateWebhookEndpoint: { path: ['webhooks', 'update'], examples: ['webhooks update 5 --enabled true   # after fixing the receiver', 'webhooks update 5 --url https://crm.example.org/v2/palanque'] },
  removeWebhookEndpoint: { path: ['webhooks', 'remove'], examples: ['webhooks remove 5'] },
  listWebhookDeliveries: { path: ['webhooks', 'deliveries'], examples: ['webhooks deliveries 5', 'webhooks deliveries 5 --all --json'] },
  sendTestWebhook: { path: ['webhooks', 'test'], examples: ['webhooks test 5   # a webhook.test event, signed like any other'] },
  resendWebhookDelivery: { path: ['webhooks', 'resend'], examples: ['webhooks resend 311'] },
  createScenarioRequest: { path: ['strategy', 'request'], examples: ['strategy request --data \'{"monitor_id":4,"entity_ids":[12,15],"horizon_days":30}\''] },
  listScenarioRequests: { path: ['strategy', 'list'], examples: ['strategy list --monitor-id 4 --state pending'] },
  approvePendingScenarioRequests: { path: ['strategy', 'approve'], examples: ['strategy approve --data \'{"selectedMonitorId":4,"scenarios_list":[7,8]}\''] },
  rejectPendingScenarioRequests: { path: ['strategy', 'reject'], examples: ['strategy reject --data \'{"selectedMonitorId":4,"scenarios_list":[9],"reason":"duplicate"}\''] },
  // Research and news
  listResearchBookmarks: { path: ['research', 'list'], examples: ['research list'] },
  addResearchBookmark: { path: ['research', 'add'], examples: ['research add --title "Pesquisa Datafolha" --url https://exemplo.com.br/pesquisa'] },
  removeResearchBookmark: { path: ['research', 'remove'], examples: ['research remove --id 3'] },
  listRequestedNewsSources: { path: ['news', 'list'], examples: ['news list'] },
  requestNewsSource: { path: ['news', 'request'], examples: ['news request --name "Jornal da Cidade" --url https://jornaldacidade.com.br'] },
  // Control and the root
  basicStatus: { path: ['status'], examples: ['status', 'status --json'] },
  listJobQueues: { path: ['jobs', 'queues'], examples: ['jobs queues   # how many jobs each queue holds in each state'] },
  listJobs: { path: ['jobs', 'list'], examples: ['jobs list sms-send --state dead', 'jobs list webhook-delivery --state failed --limit 10 --json'] },
  retryJob: { path: ['jobs', 'retry'], examples: ['jobs retry webhook-delivery 5f0c2b7e-3a41-4d6b-9a8e-2c1d0e9f8a7b   # a dead job, once more'] },
  purgeJobs: { path: ['jobs', 'purge'], examples: ['jobs purge sms-send --campaign-id 77   # the waiting sends of a canceled campaign'] },
  systemIsOnline: { path: ['online'], examples: ['online'] },
  getApiRoot: { path: ['root'], examples: ['root'] },
  resetSandbox: { path: ['sandbox', 'reset'], examples: ['sandbox reset   # back to the demo data (a sandbox server only)'] },
  // Contacts and consent
  listContacts: { path: ['contacts', 'list'], examples: ['contacts list --entity-id 12', 'contacts list --entity-id 12 --tag voluntarios --all --json'] },
  createContact: {
    path: ['contacts', 'add'],
    examples: [
      'contacts add --entity-id 12 --phone "(21) 98765-4321" --name "Mariana Souza"   # no consent on record',
      'contacts add --file contact.json   # {"entity_id": 12, "phone": ..., "consent": {"source": ..., "given_at": ...}, "tags": [...]}',
    ],
  },
  importContacts: {
    path: ['contacts', 'import'],
    examples: ['contacts import --entity-id 12 --file contatos.csv   # telefone,nome,consentimento_origem,consentimento_data,consentimento_texto,tags', 'contacts import --entity-id 12 --file - < contatos.csv'],
  },
  getContact: { path: ['contacts', 'get'], examples: ['contacts get 41'] },
  deleteContact: { path: ['contacts', 'remove'], examples: ['contacts remove 41   # past messages keep the number; to erase it too: contacts erase'] },
  eraseContact: { path: ['contacts', 'erase'], examples: ['contacts erase 41 --reason LGPD-2026-0107   # at the person\'s request: recorded in the audit log'] },
  getContactRetention: { path: ['contacts', 'retention'], examples: ['contacts retention --entity-id 12   # when its contacts are erased after its election'] },
  holdContactRetention: { path: ['contacts', 'retention-hold'], examples: ['contacts retention-hold --entity-id 12 --reason "AIME nº 0600123-45.2024.6.21.0001"   # platform admins: proceedings pending'] },
  releaseContactRetention: { path: ['contacts', 'retention-release'], examples: ['contacts retention-release --entity-id 12   # platform admins'] },
  // SMS and elections
  listSmsCredentials: { path: ['sms', 'credentials'], examples: ['sms credentials'] },
  createSmsCredential: { path: ['sms', 'add-credential'], examples: ['sms add-credential --file credential.json'] },
  listSmsOptOuts: { path: ['sms', 'opt-outs'], examples: ['sms opt-outs --entity-id 12', 'sms opt-outs --entity-id 12 --all --json'] },
  optOutSmsNumber: { path: ['sms', 'opt-out'], examples: ["sms opt-out --entity-id 12 --phone '(11) 98765-4321'   # a voter who asked by phone"] },
  listConversations: { path: ['inbox', 'list'], examples: ['inbox list --entity-id 12', 'inbox list --entity-id 12 --unread-only true --assignee-id 7 --json'] },
  listConversationMessages: { path: ['inbox', 'thread'], examples: ['inbox thread 41   # oldest first', 'inbox thread 41 --all --json'] },
  replyToConversation: { path: ['inbox', 'reply'], examples: ['inbox reply 41 --text "O comício é sábado, às 18h."   # sent once through the provider'] },
  markConversationRead: { path: ['inbox', 'read'], examples: ['inbox read 41'] },
  optOutConversation: { path: ['inbox', 'opt-out'], examples: ['inbox opt-out 41   # the conversation\'s number, out of the entity\'s campaigns'] },
  assignConversation: { path: ['inbox', 'assign'], examples: ['inbox assign 41 --assignee-id 7', 'inbox assign 41 --assignee-id null   # to nobody'] },
  listInboxChanges: { path: ['inbox', 'changes'], examples: ['inbox changes --entity-id 12   # the current cursor', 'inbox changes --entity-id 12 --cursor 1876 --wait 25   # waits up to 25 s for a change'] },
  // chatMessenger
  listMessengerPages: { path: ['inbox', 'pages'], examples: ['inbox pages --entity-id 12'] },
  connectMessengerPage: {
    path: ['inbox', 'connect-page'],
    examples: ['inbox connect-page --entity-id 12 --page-id 104857600000001 --name "Maria Santos 13" --access-token "$PAGE_TOKEN"   # the token is stored encrypted'],
  },
  disconnectMessengerPage: { path: ['inbox', 'disconnect-page'], examples: ['inbox disconnect-page 104857600000001'] },
  listSmsCampaigns: { path: ['sms', 'campaigns'], examples: ['sms campaigns --entity-id 12', 'sms campaigns --entity-id 12 --state sending --all --json'] },
  getSmsCampaign: { path: ['sms', 'campaign'], examples: ['sms campaign 77   # its state, counts by status and cost'] },
  cancelSmsCampaign: { path: ['sms', 'campaign-cancel'], examples: ['sms campaign-cancel 78   # the messages not yet handed to the provider are not sent'] },
  listSmsCampaignMessages: { path: ['sms', 'campaign-messages'], examples: ['sms campaign-messages 77', 'sms campaign-messages 77 --status failed --all --json'] },
  exportSmsCampaignMessages: { path: ['sms', 'campaign-export'], examples: ['sms campaign-export 77 > campanha-77.csv'] },
  getSmsCompliance: { path: ['sms', 'compliance'], examples: ['sms compliance --entity-id 12   # the mode, the typed window and the one the rules judge by'] },
  setSmsCompliance: {
    path: ['sms', 'set-compliance'],
    examples: [
      'sms set-compliance --entity-id 12 --mode enforce',
      'sms set-compliance --entity-id 12 --data \'{"mode":"warn","window":{"starts_on":"2026-08-16","ends_on":"2026-10-03"}}\'',
    ],
  },
  updateSmsCredential: {
    path: ['sms', 'footer'],
    examples: ['sms footer 3 --footer "Campanha Maria Santos 13. Para sair, responda SAIR"', 'sms footer 3 --data \'{"footer":null}\'   # no footer', 'sms footer 3 --name "Campanha Maria"   # its name'],
  },
  previewSmsCampaign: {
    path: ['sms', 'preview'],
    flags: { titulo: 'title', credencial: 'credential' },
    examples: [
      'sms preview --file campaign.json   # the text with the footer, its segments, the messages and the compliance warnings; nothing is sent',
      'sms preview --data \'{"titulo":"Mutirão","credencial":3,"mensagem":{"mensagem":"Mutirão sábado às 9h","contatos":{"tags":["voluntarios"]}}}\'',
    ],
  },
  sendSmsCampaign: {
    path: ['sms', 'send'],
    flags: { titulo: 'title', credencial: 'credential' },
    examples: [
      'sms send --credential 1 --title "Convite" --message "Reunião hoje às 19h" --to "(11) 99999-0001, 11 99999-0002, +55 11 99999-0003"',
      'sms send --credential 1 --title "Convite" --message "Reunião hoje às 19h" --to-file numeros.txt --batch-size 500',
      'sms send --file campaign.json',
      'sms send --data \'{"titulo":"Mutirão","credencial":3,"mensagem":{"mensagem":"Mutirão sábado às 9h","contatos":{"tags":["voluntarios"]}}}\'   # to the contacts tagged voluntarios',
    ],
  },
  syncElectionsPanel: { path: ['elections', 'sync'], examples: ['elections sync --data \'{"sync_sm":{"entity_ids":[12]}}\''] },
  getElectionsPanelSync: { path: ['elections', 'sync-status'], examples: ['elections sync-status 3f1c...'] },
  listElections: { path: ['elections', 'list'], flags: { ano: 'year', abrangencia: 'scope' }, examples: ['elections list', 'elections list --year 2024 --scope MUNICIPAL'] },
  listElectionOffices: { path: ['elections', 'offices'], examples: ['elections offices   # with the digits of each office\'s ballot numbers'] },
  listElectionParties: { path: ['elections', 'parties'], flags: { cd_eleicao: 'election' }, examples: ['elections parties --election 619   # its parties and federations'] },
  listRegisteredParties: { path: ['elections', 'registered-parties'], flags: { em: 'on' }, examples: ['elections registered-parties --on 2024-10-06   # the parties that existed on that day'] },
  getElectionCodes: { path: ['elections', 'codes'], examples: ['elections codes', 'elections codes --table grau_instrucao'] },
  searchCandidacies: {
    path: ['elections', 'search'],
    flags: { nome: 'name', nr_candidato: 'number', partido: 'party', cd_cargo: 'office', codigo_ibge: 'ibge', cd_eleicao: 'election' },
    examples: [
      'elections search --name "maria santos"   # accents and case ignored',
      'elections search --election 619 --office 11 --ibge 3550308   # the mayoral candidacies of São Paulo in 2024',
      'elections search --election 546 --uf SP --party PT --all --json',
    ],
  },
  startElectionsImport: {
    path: ['elections', 'import'],
    examples: ['elections import --data \'{"source":"https://cdn.tse.jus.br/estatistica/sead/odsele/consulta_cand/consulta_cand_2024.zip"}\'   # platform admins; then import-status'],
  },
  getElectionsImport: { path: ['elections', 'import-status'], examples: ['elections import-status 5d1e2f3a-4b5c-4d6e-8f7a-9b0c1d2e3f4a'] },
  getCandidacy: { path: ['elections', 'candidacy'], examples: ['elections candidacy --id 501'] },
  listElectionCalendar: { path: ['elections', 'calendar'], examples: ['elections calendar', 'elections calendar --json'] },
  createElectionCalendarLine: { path: ['elections', 'calendar-add'], examples: ['elections calendar-add --file suplementar.json   # platform admins; audited'] },
  updateElectionCalendarLine: { path: ['elections', 'calendar-update'], examples: ['elections calendar-update 4 --file suplementar.json   # platform admins; audited'] },
  deleteElectionCalendarLine: { path: ['elections', 'calendar-remove'], examples: ['elections calendar-remove 4   # platform admins; audited'] },
  // Municipalities
  listMunicipalities: {
    path: ['municipios', 'list'],
    flags: { codigo_uf: 'uf' },
    examples: ['municipios list --uf 35', 'municipios list --uf 35 --page 2', 'municipios list --all --json > municipios.json'],
  },
  createMunicipality: {
    path: ['municipios', 'add'],
    examples: ['municipios add --codigo-ibge 3550308 --nome "São Paulo" --latitude -23.5329 --longitude -46.6395 --capital true --codigo-uf 35'],
  },
  // Provider callbacks and webhooks (signed by the provider; useful for testing a deployment)
  receiveSmsDeliveryReceipt: { path: ['callbacks', 'sms-receipt'], examples: ['callbacks sms-receipt --x-twilio-signature <sig> --file receipt.json'] },
  receiveSocialnetRemoval: { path: ['callbacks', 'socialnet-removal'], examples: ['callbacks socialnet-removal --signed-request <signed request>'] },
  getSocialnetRemovalStatus: { path: ['callbacks', 'socialnet-removal-status'], examples: ['callbacks socialnet-removal-status --id abc123def456'] },
  searchnetOAuthCallback: { path: ['callbacks', 'searchnet-oauth'], examples: ['callbacks searchnet-oauth --code <code> --state <state>'] },
  socialVideoOAuthCallback: { path: ['callbacks', 'socialvideo-oauth'], examples: ['callbacks socialvideo-oauth --code <code> --state <state>'] },
  receiveSmsWebhook: { path: ['callbacks', 'sms'], examples: ['callbacks sms --x-twilio-signature <sig> --from +5511999990001 --to +5511999990000 --body SAIR'] },
  verifySocialnetSubscription: {
    path: ['callbacks', 'socialnet-verify'],
    examples: ['callbacks socialnet-verify --hub-mode subscribe --hub-challenge 1158201444 --hub-verify-token <token>'],
  },
  receiveSocialnetEvents: { path: ['callbacks', 'socialnet-events'], examples: ['callbacks socialnet-events --x-hub-signature-256 sha256=<hex> --file events.json'] },
  // Documentation
  getApiDocs: { path: ['docs', 'page'], examples: ['docs page > docs.html'] },
  getOpenApiYaml: { path: ['docs', 'yaml'], examples: ['docs yaml > openapi.yaml'] },
  getOpenApiJson: { path: ['docs', 'json'], examples: ['docs json > openapi.json'] },
};
