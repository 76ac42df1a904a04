/** The HTTP side of the court-data imports (imports.ts): platform admins queue one and follow it. */
import { callerOf, requireAdmin } from '../../http/auth.js';
import { sendEnvelope } from '../../http/envelope.js';
import { notFound } from '../../http/errors.js';
import type { OperationHandlers } from '../../http/operations.js';
import type { CourtImports } from './imports.js';

export function courtImportHandlers(imports: CourtImports): Pick<Required<OperationHandlers>, 'startElectionsImport' | 'getElectionsImport'> {
  return {
    async startElectionsImport(req, res) {
      const caller = callerOf(res);
      requireAdmin(caller);
      const started = await imports.request(caller.user.id, req.body.source, req.body.sha256);
      sendEnvelope(res, 201, started, 'The import was queued.');
    },

    async getElectionsImport(req, res) {
      requireAdmin(callerOf(res));
      const found = await imports.get(req.params.import_id);
      if (!found) {
        throw notFound(`There is no import ${req.params.import_id}.`, [
          { location: 'path', field: 'import_id', rule: 'existing_import', message: 'must be the id of an import', value: req.params.import_id },
        ]);
      }
      sendEnvelope(res, 200, found, `The import is ${found.state}.`);
    },
  };
}
