/**
 * GET /api/municipios/ through the full contract pipeline (express-openapi-validator on the request and
 * the response). Most valid requests never get here: the fast path (fast-path.ts) answers them from
 * pre-rendered pages; this handler serves what it passes on, and the errors are the validator's.
 */
import { ifNoneMatchHits } from '../http/conditional.js';
import { notFound, referenceDataUnavailable } from '../http/errors.js';
import type { OperationHandler } from '../http/operations.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from './catalog.js';
import { CACHE_CONTROL, LIST_PATH, etagOf, renderListBody } from './render.js';

export function listMunicipalities(catalog: MunicipalityCatalog, urls: PublicUrlSettings): OperationHandler<'listMunicipalities'> {
  return async (req, res) => {
    await catalog.reloadIfEmpty();
    if (catalog.size === 0) {
      throw referenceDataUnavailable(
        'The municipality list is not loaded yet. An administrator must import it (npm run municipios:import).',
      );
    }
    const { codigo_uf: codigoUf, page: pageNumber = 1 } = req.query;
    const page = catalog.page(codigoUf, pageNumber);
    if (!page) {
      const last = catalog.page(codigoUf, 1)?.totalPages ?? 1;
      throw notFound(`Page ${pageNumber} does not exist; the last page is ${last}.`, [
        { location: 'query', field: 'page', rule: 'max_page', message: `must be <= ${last}`, value: pageNumber },
      ]);
    }
    const body = renderListBody(page, codigoUf, apiBaseUrl(req, urls) + LIST_PATH);
    res.set('Cache-Control', CACHE_CONTROL);
    const etag = etagOf(JSON.stringify(body));
    res.set('ETag', etag);
    if (ifNoneMatchHits(req.get('If-None-Match'), etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).json(body);
  };
}
