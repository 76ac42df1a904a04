/** The HTTP side of the elections-panel sync: queue one (`POST /api/account/`) and follow it. */
import { callerOf } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { ElectionsPanelSyncs } from './syncs.js';

export function electionsHandlers(syncs: ElectionsPanelSyncs): Pick<Required<OperationHandlers>, 'syncElectionsPanel' | 'getElectionsPanelSync'> {
  return {
    async syncElectionsPanel(req, res) {
      const missing = syncs.missingSettings();
      if (missing.length > 0) {
        throw new ApiError(
          503,
          'service_unavailable',
          `This deployment cannot sync with the elections panel: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set.`,
          missing.map((variable) => ({ location: 'body', field: 'sync_sm.elections_token', rule: 'configured', message: `needs ${variable}` })),
          { 'Retry-After': '3600' },
        );
      }
      const { created, job } = await syncs.request(callerOf(res).user.id, req.body.sync_sm.elections_token);
      sendEnvelope(res, created ? 201 : 200, job, created ? 'The sync was queued.' : `A sync is already ${job.state === 'failed' ? 'waiting for a retry' : job.state}.`);
    },

    async getElectionsPanelSync(req, res) {
      const { user } = callerOf(res);
      const job = await syncs.readableBy(req.params.sync_id, user);
      if (!job) throw notFound(`There is no elections panel sync ${req.params.sync_id}.`, [{ location: 'path', field: 'sync_id', rule: 'existing_sync', message: 'must be the id of one of your syncs', value: req.params.sync_id }]);
      sendEnvelope(res, 200, job, `The sync is ${job.state}.`);
    },
  };
}
