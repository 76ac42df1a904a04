/**
 * GET /api/municipios/ through the full contract pipeline (express-openapi-validator on the request and
 * the response). Most valid requests never get here: the fast path (fast-path.ts) answers them from
 * pre-rendered pages; this handler serves what it passes on, and the errors are the validator's.
 */
import { UniqueConstraintError } from 'sequelize';
import { callerOf, requireAdmin } from '../http/auth.js';
import { ifNoneMatchHits } from '../http/conditional.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound, referenceDataUnavailable } from '../http/errors.js';
import type { OperationHandler } from '../http/operations.js';
import { apiBaseUrl, type PublicUrlSettings } from '../http/public-url.js';
import type { MunicipalityCatalog } from './catalog.js';
import { CACHE_CONTROL, LIST_PATH, etagOf, renderListBody } from './render.js';
import { sameMunicipality } from './import.js';
import { normalise, type MunicipalityModel } from './model.js';
import { checkMunicipality, type Municipality } from './rules.js';

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

/**
 * POST /api/municipios/ (admins): one municipality, checked like an imported row. The same record
 * again is a harmless 200; the same code with other fields is 409 (an import changes existing ones).
 */
export function createMunicipality(model: MunicipalityModel, catalog: MunicipalityCatalog): OperationHandler<'createMunicipality'> {
  return async (req, res) => {
    requireAdmin(callerOf(res));
    const municipality: Municipality = normalise(req.body);
    const problems = checkMunicipality(municipality);
    if (problems.length > 0) {
      throw new ApiError(
        422,
        'validation_failed',
        'The municipality is invalid.',
        problems.map(({ field, rule, message }) => ({ location: 'body' as const, field, rule, message, value: municipality[field as keyof Municipality] })),
      );
    }
    const created = await insertOnce(model, municipality);
    const existing = created ? municipality : await findExisting(model, municipality.codigo_ibge);
    if (!created && existing && !sameMunicipality(existing, municipality)) {
      throw new ApiError(409, 'conflict', `Municipality ${municipality.codigo_ibge} already exists with other fields (${existing.nome}).`, [
        { location: 'body', field: 'codigo_ibge', rule: 'unique', message: 'already exists with other fields', value: municipality.codigo_ibge },
      ]);
    }
    if (created) await catalog.reload();
    sendEnvelope(res, created ? 201 : 200, municipality, created ? 'Municipality created.' : 'The municipality already exists; nothing changed.');
  };
}

async function insertOnce(model: MunicipalityModel, municipality: Municipality): Promise<boolean> {
  try {
    await model.create(municipality);
    return true;
  } catch (error) {
    if (error instanceof UniqueConstraintError) return false;
    throw error;
  }
}

async function findExisting(model: MunicipalityModel, code: number): Promise<Municipality | undefined> {
  const row = (await model.findByPk(code, { raw: true })) as Municipality | null;
  return row ? normalise(row) : undefined;
}
