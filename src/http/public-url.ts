/**
 * Absolute URLs of the API (pagination links, status addresses). A configured PUBLIC_URL wins; otherwise
 * the request's own protocol and host, which Express takes from X-Forwarded-Proto/-Host when TRUST_PROXY
 * allows it. Deployments should set PUBLIC_URL so that links never depend on a client's Host header.
 */
import type { Request } from 'express';

export interface PublicUrlSettings {
  publicUrl: string | undefined;
  basePath: string;
}

export function apiBaseUrl(req: Pick<Request, 'protocol' | 'host'>, settings: PublicUrlSettings): string {
  return publicOrigin(req, settings) + settings.basePath;
}

/** The absolute URL the client requested (what providers sign): the public origin, then the path and query as sent. */
export function requestedUrl(req: Pick<Request, 'protocol' | 'host' | 'originalUrl'>, settings: Pick<PublicUrlSettings, 'publicUrl'>): string {
  return publicOrigin(req, settings) + req.originalUrl;
}

function publicOrigin(req: Pick<Request, 'protocol' | 'host'>, settings: Pick<PublicUrlSettings, 'publicUrl'>): string {
  return settings.publicUrl ?? `${req.protocol}://${req.host}`;
}
