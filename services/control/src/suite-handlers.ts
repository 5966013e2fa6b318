/** The handlers of the suite and dataset routes: a dataset card, a suite's readiness, a freeze. */
import type { Bus } from '@shadowplane/bus';
import { ShadowplaneError } from '@shadowplane/contracts';
import { invalidRequest } from './errors.js';
import type { Handlers } from './handler-kit.js';
import type { ReportsPort } from './reports-port.js';
import type { SuiteService } from './suites.js';

/**
 * Handlers of getDatasetCard (the reports' card, else the frozen dataset's), getSuiteStatus and
 * freezeSuite (201 when a freeze wrote a dataset, 200 when every dataset already existed).
 * Errors: 400 invalid_request (hash not 64 lowercase hex), 404 not_found, and SuiteService's.
 */
export function suiteHandlers(bus: Bus, reports: ReportsPort, suites: SuiteService): Handlers {
  return {
    getDatasetCard: async (req) => {
      const hash = (req.params as { hash: string }).hash;
      if (!/^[0-9a-f]{64}$/.test(hash))
        throw invalidRequest([{ path: 'hash', message: 'must be 64 lowercase hex characters' }]);
      const card = (await reports.readDatasetCard(bus, hash)) ?? (await suites.readCard(hash));
      if (!card) throw new ShadowplaneError('not_found', `no dataset card ${hash}`, { details: { field: 'hash' } });
      return card;
    },
    getSuiteStatus: async (req) =>
      suites.status((req.params as { suite: string }).suite, req.query as Record<string, unknown>),
    freezeSuite: async (req, reply) => {
      const r = await suites.freeze((req.params as { suite: string }).suite, req.body);
      req.log.info(
        { suite: r.suite, datasets: r.datasets.map((d) => [d.call_type, d.dataset_hash, d.created]) },
        'suite frozen',
      );
      return reply.status(r.datasets.some((d) => d.created) ? 201 : 200).send(r);
    },
  };
}
