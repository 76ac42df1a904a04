/**
 * The HTTP side of account linking: the start operation; the two callbacks the contract fixes (the
 * search provider's, reached by the browser without a key, and the video platform's, forwarded by the
 * front end with the user's key), which both answer a pending link and where to confirm it, and differ
 * only in who the state must belong to; the list of the caller's links still waiting, where the front
 * end finds what a callback answered to the browser alone; and the confirmation, which only the user
 * who started the flow can give.
 */
import type { Request, Response } from 'express';
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, badRequest, notFound, type ErrorDetail } from '../http/errors.js';
import type { OperationHandlers, OperationRequest } from '../http/operations.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { Logger } from '../logger.js';
import { ExchangeError, type LinkableProvider } from './providers.js';
import type { SocialLinks } from './index.js';
import type { StateRefusal } from './states.js';
import { counted } from '../http/counted.js';

type OAuthOperations = 'startSocialLogin' | 'searchnetOAuthCallback' | 'socialVideoOAuthCallback' | 'listPendingSocialLogins' | 'confirmSocialLogin';

const REFUSALS: Record<StateRefusal, string> = {
  forged: 'was not issued by Palanque or was altered',
  expired: 'has expired; start again',
  used: 'was already used; start again',
  other_provider: 'was issued for another provider',
  foreign: 'was issued to another user',
};

export function oauthHandlers(links: SocialLinks, urls: PublicUrlSettings, logger: Logger): Pick<Required<OperationHandlers>, OAuthOperations> {
  /** Where the front end sends a pending link's confirmation: confirmSocialLogin. */
  const confirmUrlFor = (req: Pick<Request, 'protocol' | 'host'>) => `${apiBaseUrl(req, urls)}/api/usuario/confirm_social_login/`;

  /** What both callbacks do; `userId` is the authenticated caller, when the callback has one. */
  async function complete(provider: LinkableProvider, req: OperationRequest<'searchnetOAuthCallback'>, res: Response, userId?: number): Promise<void> {
    const { code, state, error, error_description: description } = req.query;
    if (error) {
      await links.abandon(provider, state, userId);
      throw badRequest(`The provider did not authorize the link: ${error}.`, [
        { location: 'query', field: 'error', rule: 'provider_error', message: clipped(description ?? `the provider answered ${error}`), value: error },
      ]);
    }
    const missing = (['code', 'state'] as const).filter((name) => !req.query[name]);
    if (missing.length > 0) {
      throw badRequest(`The callback is incomplete: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} required.`, missing.map((field) => ({ location: 'query' as const, field, rule: 'required', message: 'is required' })));
    }
    if (links.missingFor(provider).length > 0) throw invalidState(`No ${provider} link can be completed here: this deployment does not link ${provider} accounts.`);

    let completion;
    try {
      completion = await links.complete(provider, code!, state!, userId);
    } catch (failure) {
      if (!(failure instanceof ExchangeError)) throw failure;
      logger.warn({ provider, reason: failure.message }, 'OAuth token exchange failed');
      const details: ErrorDetail[] = failure.providerError
        ? [{ location: 'query', field: 'code', rule: 'token_exchange', message: clipped(failure.message), value: clipped(failure.providerError) }]
        : [];
      throw new ApiError(500, 'internal_error', `The token exchange with ${provider} failed; start again.`, details);
    }
    if ('refused' in completion) throw invalidState(`The state ${REFUSALS[completion.refused]}.`);
    if ('taken' in completion) throw linkTaken(provider, { location: 'query', field: 'code' });
    sendEnvelope(res, 200, { ...completion.pending, confirm_url: confirmUrlFor(req) }, `Nothing is linked yet: the user who started the flow confirms ${completion.pending.display_name} at confirm_url.`);
  }

  return {
    async startSocialLogin(req, res) {
      const { provider } = req.body;
      const missing = links.missingFor(provider);
      if (missing.length > 0) {
        throw new ApiError(
          503,
          'service_unavailable',
          `This deployment cannot link ${provider} accounts: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set.`,
          missing.map((variable) => ({ location: 'body', field: 'provider', rule: 'configured', message: `needs ${variable}`, value: provider })),
          { 'Retry-After': '3600' },
        );
      }
      const authorization = await links.start(callerOf(res).user.id, provider, `${apiBaseUrl(req, urls)}/api/callback/searchnet/`);
      sendEnvelope(res, 201, authorization, 'Send the browser to authorization_url.');
    },

    searchnetOAuthCallback: (req, res) => complete('searchnet', req, res),

    socialVideoOAuthCallback: (req, res) => complete('socialvideo', req, res, callerOf(res).user.id),

    async listPendingSocialLogins(req, res) {
      const confirmUrl = confirmUrlFor(req);
      const data = (await links.waitingFor(callerOf(res).user.id)).map((pending) => ({ ...pending, confirm_url: confirmUrl }));
      sendEnvelope(res, 200, data, `${counted(data.length, 'link')} waiting for your confirmation.`);
    },

    async confirmSocialLogin(req, res) {
      const id = req.body.pending_link_id;
      const field = { location: 'body', field: 'pending_link_id', value: id } as const;
      const confirmation = await links.confirm(callerOf(res).user.id, id);
      if ('unknown' in confirmation) {
        throw notFound(`You have no pending link ${id}.`, [{ ...field, rule: 'own_pending_link', message: 'must be a pending link of a flow you started' }]);
      }
      if ('expired' in confirmation) {
        const message = 'has expired; start again';
        throw new ApiError(400, 'invalid_token', `The pending link ${message}.`, [{ ...field, rule: 'expired', message }]);
      }
      if ('taken' in confirmation) throw linkTaken(confirmation.taken, field);
      sendEnvelope(res, 200, confirmation.linked, 'The account was linked.');
    },
  };
}

/** A provider's words, cut to what the error model holds (1,000 characters). */
function clipped(text: string): string {
  return text.length <= 1000 ? text : `${text.slice(0, 999)}…`;
}

/** 409: the provider account is linked to another user (checked at the callback and again at the confirmation). */
function linkTaken(provider: LinkableProvider, where: Pick<ErrorDetail, 'location' | 'field'>): ApiError {
  return new ApiError(409, 'conflict', `This ${provider} account is already linked to another user.`, [
    { ...where, rule: 'unique_link', message: 'names an account linked to another user' },
  ]);
}

function invalidState(message: string): ApiError {
  return new ApiError(400, 'invalid_token', message, [{ location: 'query', field: 'state', rule: 'issued_state', message }]);
}
