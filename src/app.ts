/**
 * The Express application, built on the contract. Every request passes, in order: metrics, the request
 * id, security headers and CORS, the log of early answers (what the next steps refuse before the request
 * log: a 429, a 500), the rate limiter (which charges a request to its address, or to its API
 * key once the key authenticates: a lookup the contract validator then reuses), the municipality list's
 * fast path (which answers the valid requests it can prove valid), the request log, the documentation
 * page's assets (docs/), the path/method guard, the body parsers, the contract validator (which also
 * authenticates the API key, see http/auth.ts) and the idempotency keys, before reaching its operation's
 * handler; every error leaves through one handler in the error model.
 */
import type { IncomingMessage } from 'node:http';
import express, { type Express, type RequestHandler } from 'express';
import { DEFAULT_REQUEST_DEADLINE_MS, type Config } from './config.js';
import type { Logger } from './logger.js';
import { buildRoutes, sharedContract } from './http/contract.js';
import { contractFile } from './project-root.js';
import { readLane } from './http/read-lane.js';
import { ContractSchemas } from './http/contract-schemas.js';
import { errorHandler, translateApiError, translateBodyParserError, translateDatabaseBusy, translateOutage } from './http/errors.js';
import { afterDeadline, requestDeadline } from './http/deadline.js';
import { corsFor, fixedHeaders, securityHeaders } from './http/hygiene.js';
import { metricsEndpoint, requestMetrics, type Metrics } from './http/metrics.js';
import { observeCompletion } from './http/completion.js';
import { inSequence } from './http/sequence.js';
import { idempotency, type IdempotencyStore } from './http/idempotency.js';
import { rateLimits } from './http/rate-limits.js';
import { bindKeyAuthenticator, keyAuthenticatedOperations, translateKeyLookupFailure, type KeyAuthenticator } from './http/auth.js';
import type { Redis } from 'ioredis';
import { methodGuard } from './http/method-guard.js';
import { dispatch, type OperationHandlers } from './http/operations.js';
import { rejectInvalidRequestId, requestId } from './http/request-id.js';
import { earlyAnswerLogging, requestLogging } from './http/request-logging.js';
import { deprecatedFields, deprecatedOperations } from './http/deprecation.js';
import { contractValidator, refuseCostlyJson, refuseNonFiniteNumbers, refuseNulCharacters, translateValidatorError } from './http/validation.js';
import { wellFormedText } from './http/unicode.js';
import type { MunicipalityCatalog } from './municipalities/catalog.js';
import { municipalityListFastPath } from './municipalities/fast-path.js';
import { createMunicipality, listMunicipalities } from './municipalities/handlers.js';
import type { MunicipalityModel } from './municipalities/model.js';
import type { Accounts } from './accounts/index.js';
import { accountHandlers } from './accounts/handlers.js';
import type { Entities } from './entities/index.js';
import { entityHandlers } from './entities/handlers.js';
import { guardianshipHandlers } from './entities/guardianship-handlers.js';
import { teamHandlers } from './entities/team-handlers.js';
import { historyHandlers } from './entities/history-handlers.js';
import { controlHandlers } from './control/handlers.js';
import { jobHandlers } from './control/job-handlers.js';
import { notASandboxHandlers } from './control/not-a-sandbox.js';
import type { JobQueue } from './jobs/index.js';
import { probes, readinessSourcesOf } from './control/readiness.js';
import { knownMigrationNames } from './db/migrator.js';
import { docsAssets, docsHandlers } from './docs/index.js';
import type { StatusSources } from './control/status.js';
import { newsHandlers } from './news/handlers.js';
import type { NewsSources } from './news/sources.js';
import type { ResearchBookmarks } from './research/bookmarks.js';
import { researchHandlers } from './research/handlers.js';
import { notificationHandlers, pushHandlers, type NotificationCenter } from './notifications/index.js';
import { webhookHandlers } from './webhooks/handlers.js';
import type { Webhooks } from './webhooks/webhooks.js';
import type { Monitors } from './monitors/index.js';
import { monitorHandlers } from './monitors/handlers.js';
import { monitorAlertHandlers } from './monitors/alert-handlers.js';
import type { Strategy } from './strategy/index.js';
import { strategyHandlers } from './strategy/handlers.js';
import { socialnetHandlers, socialnetSignatureChecks } from './socialnet/index.js';
import type { SocialnetRemovals } from './socialnet/removals.js';
import type { SeenDeliveries } from './socialnet/deliveries.js';
import { providerSignatures } from './http/provider-signatures.js';
import { chatHandlers, messengerHandlers, type Inbox } from './chat/index.js';
import { complianceHandlers, contactHandlers, Contacts, smsCampaignHandlers, smsHandlers, smsSignatureChecks } from './messaging/index.js';
import { contactRetentionHandlers } from './messaging/contact-retention-handlers.js';
import type { ContactRetention } from './messaging/contact-retention.js';
import { oauthHandlers } from './oauth/handlers.js';
import type { SocialLinks } from './oauth/index.js';
import { electionsHandlers, type ElectionsPanelSyncs } from './elections/index.js';
import { calendarHandlers } from './elections/calendar-handlers.js';
import { CourtCatalog } from './elections/tse/catalog.js';
import { courtReadHandlers } from './elections/tse/read-handlers.js';
import { courtImportHandlers } from './elections/tse/import-handlers.js';
import type { CourtImports } from './elections/tse/imports.js';
import type { Sms } from './messaging/sms.js';

export type AppConfig = Pick<
  Config,
  | 'basePath'
  | 'publicUrl'
  | 'frontendResetUrl'
  | 'frontendVerifyUrl'
  | 'frontendUnlockUrl'
  | 'frontendSignUpUrl'
  | 'trustProxy'
  | 'bodyLimit'
  | 'validateResponses'
  | 'corsOrigins'
  | 'metricsToken'
  | 'rateLimits'
  | 'assistants'
  | 'docsUrl'
  | 'socialnet'
> &
  // Left out (tests), a signed provider callback costs nothing once verified.
  Partial<Pick<Config, 'signedCallbacks' | 'requestDeadlineMs'>>;

export interface AppDependencies {
  config: AppConfig;
  logger: Logger;
  municipalities: MunicipalityCatalog;
  /** The municipality table, for the admin create. */
  municipalityModel: MunicipalityModel;
  /** Users, keys and sessions: they authenticate every ApiKeyAuth operation. */
  accounts: Accounts;
  /** Campaign entities and their teams. */
  entities: Entities;
  /** Social monitors and their metrics. */
  monitors: Monitors;
  /** Strategy scenario requests and their runs. */
  strategy: Strategy;
  /** The social network's data-removal requests. */
  socialnetRemovals: SocialnetRemovals;
  /** The social network's deliveries already processed (kept SOCIALNET_REPLAY_WINDOW_SECONDS). */
  socialnetDeliveries: SeenDeliveries;
  /** SMS credentials, campaigns and the provider's callbacks. */
  sms: Sms;
  /** The erasure of an entity's contacts after its election (issue 42). */
  contactRetention: ContactRetention;
  /** The entities' chat inboxes, SMS and messenger. */
  inbox: Inbox;
  /** Accounts at OAuth providers linked to users. */
  socialLinks: SocialLinks;
  /** Syncs with the elections panel. */
  electionsPanelSyncs: ElectionsPanelSyncs;
  /** Imports of the electoral court's candidacy files, queued by platform admins. */
  courtImports: CourtImports;
  /** Each user's notifications and push subscriptions (and the events that make them). */
  notificationCenter: NotificationCenter;
  /** Entities' outbound webhooks: endpoints, deliveries and their log. */
  webhooks: Webhooks;
  /** Each user's research bookmarks. */
  researchBookmarks: ResearchBookmarks;
  /** News sources requested for monitoring. */
  newsSources: NewsSources;
  /** What basicStatus reads (the database and the job queue); without it basicStatus answers 501. */
  status?: StatusSources;
  /** The job queue the admins' job operations (`palanque jobs`) read and change; without it they answer 501. */
  jobs?: JobQueue;
  /** Serve the municipality list's valid requests from pre-rendered pages (default); off sends all through the validator. */
  fastPaths?: boolean;
  metrics: Metrics;
  /** Shares rate-limit budgets across instances (REDIS_URL). */
  redis?: Redis;
  /** Namespace of rate-limit keys in Redis. */
  rateLimitPrefix?: string;
  idempotencyKeys: IdempotencyStore;
  /** Handlers to use instead of (or beyond) the built-in ones, by operationId (the sandbox's resetSandbox, tests' stand-ins). */
  handlers?: OperationHandlers;
  /** The contract to serve, one whole document (JSON or YAML); sdk/openapi.json by default (the hybrid mode serves a copy being edited). */
  contractFile?: string;
  /** Answers a valid request to an operation without a handler, instead of 501 (the hybrid mode forwards it to the mock). */
  unimplemented?: RequestHandler;
  /** Headers set on every response (the hybrid mode's `X-Served-By: palanque`; what answers later may change them). */
  responseHeaders?: Record<string, string>;
}

/**
 * The contract's GETs that change state (a guardianship action, an OAuth callback spending its state, a
 * password reset): rare, and not reads, so they always take the full pipeline rather than the read lane.
 */
export const GETS_THAT_CHANGE_STATE = ['manageGuardianship', 'searchnetOAuthCallback', 'socialVideoOAuthCallback', 'generateNewPassword', 'verifyEmail'];

/** An SMS campaign's state, for the purge of its jobs; undefined when there is no such campaign. */
async function campaignStateOf(sms: Sms, id: number): Promise<string | undefined> {
  const campaign = (await sms.models.Campaign.findByPk(id, { attributes: ['state'], raw: true })) as { state: string } | null;
  return campaign?.state;
}

/** The operationIds this app has a handler for (`app.locals.implementedOperations`). */
export function implementedOperations(app: Express): ReadonlySet<string> {
  return app.locals.implementedOperations as ReadonlySet<string>;
}

export function createApp(dependencies: AppDependencies): Express {
  const { config, logger, municipalities, municipalityModel, accounts, entities, metrics, redis, rateLimitPrefix, idempotencyKeys, fastPaths = true } =
    dependencies;
  metrics.watchRedis(redis);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false); // ETags are set where they mean something (the municipality list)

  // Shared by the apps of this process and read only: what is built from it may be kept per contract object.
  const contract = sharedContract(dependencies.contractFile ?? contractFile);
  const handlers: OperationHandlers = {
    listMunicipalities: listMunicipalities(municipalities, config),
    createMunicipality: createMunicipality(municipalityModel, municipalities),
    ...accountHandlers(accounts, config, entities.teams),
    ...entityHandlers({ entities, accounts, municipalities, urls: config }),
    ...guardianshipHandlers({ entities, accounts }),
    ...teamHandlers({ entities, accounts, urls: config }),
    ...historyHandlers({ entities, accounts, municipalities, urls: config }),
    ...monitorHandlers(dependencies.monitors, entities.teams, entities.history),
    ...monitorAlertHandlers(dependencies.monitors),
    ...strategyHandlers({ strategy: dependencies.strategy, monitors: dependencies.monitors, entities, urls: config }),
    ...socialnetHandlers({
      settings: config.socialnet,
      monitors: dependencies.monitors.store,
      messenger: dependencies.inbox.messenger,
      removals: dependencies.socialnetRemovals,
      deliveries: dependencies.socialnetDeliveries,
      urls: config,
    }),
    ...smsHandlers({ sms: dependencies.sms, entities, urls: config }),
    ...complianceHandlers({ sms: dependencies.sms, entities, audit: accounts.audit }),
    ...contactHandlers({ contacts: new Contacts(dependencies.sms.models, dependencies.sms.optOuts), models: dependencies.sms.models, teams: entities.teams, audit: accounts.audit, urls: config }),
    ...contactRetentionHandlers({ retention: dependencies.contactRetention, teams: entities.teams }),
    ...smsCampaignHandlers({ sms: dependencies.sms, teams: entities.teams, urls: config }),
    ...chatHandlers({ inbox: dependencies.inbox, teams: entities.teams, urls: config }),
    ...messengerHandlers({ messenger: dependencies.inbox.messenger, teams: entities.teams }),
    ...oauthHandlers(dependencies.socialLinks, config, logger),
    ...electionsHandlers(dependencies.electionsPanelSyncs),
    ...calendarHandlers({ sequelize: entities.models.Entity.sequelize!, audit: accounts.audit }),
    ...courtImportHandlers(dependencies.courtImports),
    ...courtReadHandlers({ catalog: new CourtCatalog(entities.models.Entity.sequelize!), urls: config }),
    ...notificationHandlers(dependencies.notificationCenter.notifications, config),
    ...pushHandlers(dependencies.notificationCenter.push),
    ...webhookHandlers({ webhooks: dependencies.webhooks, teams: entities.teams, urls: config }),
    ...researchHandlers(dependencies.researchBookmarks),
    ...newsHandlers(dependencies.newsSources),
    ...controlHandlers(config, municipalities, dependencies.status),
    ...(dependencies.jobs ? jobHandlers({ jobs: dependencies.jobs, campaignState: (id) => campaignStateOf(dependencies.sms, id) }) : {}),
    ...docsHandlers(contract),
    // Refused here (403 not_a_sandbox); the sandbox plugs in its own through `handlers`.
    ...notASandboxHandlers(),
    ...dependencies.handlers,
  };

  app.locals.implementedOperations = new Set(Object.keys(handlers));

  const routes = buildRoutes(contract, config.basePath);
  const authenticate: KeyAuthenticator = (key) => accounts.tokens.authenticate(key);
  const keys = { operations: keyAuthenticatedOperations(contract), authenticate };
  const schemas = new ContractSchemas(contract);
  const signatureChecks = { ...socialnetSignatureChecks(config.socialnet), ...smsSignatureChecks(dependencies.sms, config) };
  const { responseHeaders } = dependencies;
  // What every request crosses before its body is read, in order, as one layer (sequence.ts says why).
  app.use(
    inSequence([
      responseHeaders ? fixedHeaders(responseHeaders) : undefined,
      observeCompletion([requestMetrics(metrics), earlyAnswerLogging(logger)]),
      requestId,
      securityHeaders(),
      corsFor(config.corsOrigins),
      metricsEndpoint(metrics, config.metricsToken),
      // The probes (/livez, /readyz), before the rate limits: a balancer's probes are never refused.
      probes(readinessSourcesOf(entities.models.Entity.sequelize!, knownMigrationNames(), redis), logger),
      rateLimits({ budgets: config.rateLimits, routes, redis, keyPrefix: rateLimitPrefix, keys, signedCallbacks: config.signedCallbacks }),
      // Before the fast path and the read lane, which answer without the middleware below.
      deprecatedOperations(contract, routes, config.basePath),
      fastPaths
        ? municipalityListFastPath({ catalog: municipalities, schemas, urls: config, validateResponses: config.validateResponses, logger })
        : undefined,
      requestLogging(logger),
      rejectInvalidRequestId,
      // The documentation page's scripts and styles and its guide (not operations of the contract), before the path guard.
      docsAssets(config.basePath, contract),
      methodGuard(routes),
      fastPaths && !config.validateResponses
        ? readLane({
            document: contract,
            routes,
            schemas,
            handlers,
            authenticate,
            excluded: new Set([...GETS_THAT_CHANGE_STATE, ...Object.keys(signatureChecks)]),
          })
        : undefined,
    ]),
  );
  // The raw bytes are kept for the idempotency fingerprint ("the same body" means the same bytes).
  const keepRawBody = (req: IncomingMessage, _res: unknown, raw: Buffer) => {
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = raw;
  };
  // Not strict: a body that is valid JSON but not an object (`null`, `123`, `"x"`) parses, and the
  // contract validator answers it 422 naming the body, as it does `[]`; strict parsing called it bad JSON (400).
  // Its shape is checked on the bytes before parsing (refuseCostlyJson): a megabyte can take JSON.parse half a second.
  const keepCheapJson = (req: IncomingMessage, res: unknown, raw: Buffer) => {
    keepRawBody(req, res, raw);
    refuseCostlyJson(raw);
  };
  app.use(express.json({ limit: config.bodyLimit, verify: keepCheapJson, strict: false }));
  app.use(express.urlencoded({ extended: false, limit: config.bodyLimit, verify: keepRawBody }));
  app.use(express.text({ limit: config.bodyLimit, verify: keepRawBody }));
  bindKeyAuthenticator(app, authenticate);
  app.use(contractValidator(contract, config.basePath, config.validateResponses));
  const usedDeprecatedFields = deprecatedFields(contract, config.basePath);
  if (usedDeprecatedFields) app.use(usedDeprecatedFields);
  app.use(refuseNonFiniteNumbers);
  // Before refuseNulCharacters: a body's NUL is judged with the lone surrogates (rule `unicode`), and replaced in a provider's delivery.
  app.use(wellFormedText());
  app.use(refuseNulCharacters);
  app.use(providerSignatures(signatureChecks));
  app.use(requestDeadline(config.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS));
  app.use(idempotency(idempotencyKeys, logger));
  app.use(dispatch(handlers, dependencies.unimplemented));
  app.use(afterDeadline);
  // A failed key lookup before the validator's translator (which would call it a 401).
  app.use(errorHandler([translateApiError, translateBodyParserError, translateKeyLookupFailure, translateValidatorError, translateDatabaseBusy, translateOutage]));
  return app;
}
