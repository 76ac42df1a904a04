/**
 * The admins' view of the background jobs (`palanque jobs`): counts by queue and state, a queue's jobs in
 * one state, one more try for a dead job, and the purge of a canceled campaign's waiting jobs. Thin: the
 * queue (src/jobs/) does the work; the purge asks the campaign's state first, since only a canceled
 * campaign's jobs have nothing left to do (a job already running finishes as the cancel has it).
 */
import { callerOf, requireAdmin } from '../http/auth.js';
import { sendEnvelope } from '../http/envelope.js';
import { ApiError, notFound } from '../http/errors.js';
import type { OperationHandlers } from '../http/operations.js';
import type { JobQueue, JobRecord } from '../jobs/index.js';

type JobOperations = 'listJobQueues' | 'listJobs' | 'retryJob' | 'purgeJobs';

export interface JobHandlerDependencies {
  jobs: JobQueue;
  /** A campaign's state (`queued`, `sending`, `completed`, `canceled`), undefined when there is none. */
  campaignState(id: number): Promise<string | undefined>;
}

const DEFAULT_LIMIT = 50;

export function jobHandlers({ jobs, campaignState }: JobHandlerDependencies): Pick<Required<OperationHandlers>, JobOperations> {
  return {
    async listJobQueues(_req, res) {
      requireAdmin(callerOf(res));
      const queues = (await jobs.counts()).map((count) => ({ queue: count.name, state: count.state, jobs: count.jobs }));
      sendEnvelope(res, 200, { queues }, `${queues.length} queue ${queues.length === 1 ? 'state' : 'states'}.`);
    },

    async listJobs(req, res) {
      requireAdmin(callerOf(res));
      const { queue } = req.params;
      const { state } = req.query;
      const listed = await jobs.list(queue, state, req.query.limit ?? DEFAULT_LIMIT);
      sendEnvelope(res, 200, { queue, state, jobs: listed.map(shown) }, `${listed.length} ${state} ${listed.length === 1 ? 'job' : 'jobs'} in ${queue}.`);
    },

    async retryJob(req, res) {
      requireAdmin(callerOf(res));
      const { queue, job_id: id } = req.params;
      const job = await jobs.get(queue, id);
      if (!job) throw notFound(`Queue ${queue} has no job ${id}.`, [{ location: 'path', field: 'job_id', rule: 'exists', message: 'must be a job of the queue', value: id }]);
      if (!(await jobs.retry(queue, id))) {
        const state = (await jobs.get(queue, id))?.state ?? job.state;
        throw new ApiError(409, 'conflict', `Job ${id} of ${queue} is ${state}; only a dead job can be retried.`, [
          { location: 'path', field: 'job_id', rule: 'retryable_state', message: 'must be a dead job', value: state },
        ]);
      }
      const retried = (await jobs.get(queue, id)) ?? job;
      sendEnvelope(res, 200, shown(retried), `Job ${id} of ${queue} is queued for one more try.`);
    },

    async purgeJobs(req, res) {
      requireAdmin(callerOf(res));
      const { queue } = req.params;
      const campaignId = req.body.campaign_id;
      const state = await campaignState(campaignId);
      if (state === undefined) {
        throw notFound(`There is no SMS campaign ${campaignId}.`, [{ location: 'body', field: 'campaign_id', rule: 'exists', message: 'must be an SMS campaign', value: campaignId }]);
      }
      if (state !== 'canceled') {
        throw new ApiError(409, 'conflict', `Campaign ${campaignId} is ${state}; only a canceled campaign's jobs can be purged (cancel it first with cancelSmsCampaign).`, [
          { location: 'body', field: 'campaign_id', rule: 'canceled_campaign', message: 'must be a canceled campaign', value: state },
        ]);
      }
      const purged = await jobs.purgeQueued(queue, { campaign_id: campaignId });
      sendEnvelope(res, 200, { queue, campaign_id: campaignId, purged }, `${purged} waiting ${purged === 1 ? 'job' : 'jobs'} of campaign ${campaignId} purged from ${queue}.`);
    },
  };
}

function shown(job: JobRecord) {
  return {
    id: job.id,
    queue: job.name,
    state: job.state,
    attempts: job.attempts,
    data: typeof job.data === 'object' && job.data !== null ? (job.data as Record<string, unknown>) : null,
    error: job.error,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
  };
}
