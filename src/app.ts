/**
 * The Express application, built on the contract: every request passes the request id, the log, the
 * path/method guard, the body parsers and the contract validator before reaching its operation's handler;
 * every error leaves through one handler in the error model.
 */
import express, { type Express } from 'express';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { buildRoutes, loadContract } from './http/contract.js';
import { ContractSchemas } from './http/contract-schemas.js';
import { errorHandler, translateApiError, translateBodyParserError } from './http/errors.js';
import { methodGuard } from './http/method-guard.js';
import { dispatch, type OperationHandlers } from './http/operations.js';
import { rejectInvalidRequestId, requestId } from './http/request-id.js';
import { requestLogging } from './http/request-logging.js';
import { contractValidator, translateValidatorError } from './http/validation.js';
import type { MunicipalityCatalog } from './municipalities/catalog.js';
import { municipalityListFastPath } from './municipalities/fast-path.js';
import { listMunicipalities } from './municipalities/handlers.js';

export type AppConfig = Pick<Config, 'basePath' | 'publicUrl' | 'trustProxy' | 'bodyLimit' | 'validateResponses'>;

export interface AppDependencies {
  config: AppConfig;
  logger: Logger;
  municipalities: MunicipalityCatalog;
  /** Serve the municipality list's valid requests from pre-rendered pages (default); off sends all through the validator. */
  fastPaths?: boolean;
}

export function createApp({ config, logger, municipalities, fastPaths = true }: AppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false); // ETags are set where they mean something (the municipality list)

  const contract = loadContract();
  const handlers: OperationHandlers = {
    listMunicipalities: listMunicipalities(municipalities, config),
  };

  app.use(requestId);
  if (fastPaths) {
    app.use(
      municipalityListFastPath({
        catalog: municipalities,
        schemas: new ContractSchemas(contract),
        urls: config,
        validateResponses: config.validateResponses,
        logger,
      }),
    );
  }
  app.use(requestLogging(logger));
  app.use(rejectInvalidRequestId);
  app.use(methodGuard(buildRoutes(contract, config.basePath)));
  app.use(express.json({ limit: config.bodyLimit }));
  app.use(express.urlencoded({ extended: false, limit: config.bodyLimit }));
  app.use(express.text({ limit: config.bodyLimit }));
  app.use(contractValidator(contract, config.basePath, config.validateResponses));
  app.use(dispatch(handlers));
  app.use(errorHandler([translateApiError, translateBodyParserError, translateValidatorError]));
  return app;
}
