/**
 * A queue that runs nothing and refuses every job: for processes that must not queue work (the demo
 * seed, test apps started without jobs), so that nothing can slip into a real queue by accident.
 */
import type { JobQueue } from './queue.js';

export function refusingJobQueue(why: string): JobQueue {
  return {
    async start() {},
    async register() {},
    async enqueue(name) {
      throw new Error(`${why} (job ${name})`);
    },
    async enqueueMany(name) {
      throw new Error(`${why} (jobs ${name})`);
    },
    async get() {
      return undefined;
    },
    async stats() {
      return { queued: 0, running: 0, failed: 0 };
    },
    async purgeQueued() {
      return 0;
    },
    async counts() {
      return [];
    },
    async list() {
      return [];
    },
    async retry() {
      return false;
    },
    async stop() {},
  };
}
