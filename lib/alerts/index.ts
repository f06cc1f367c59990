// Alerting in one process: the rule engine the collector feeds, and a delivery worker for the
// outbox. Started with the collector (lib/collector/index.ts) when `alerts.enabled` (default).
import type { Config } from '../config';
import type { Store } from '../db';
import type { Logger } from '../log';
import type { Clock } from '../time/clock';
import { AlertEngine } from './engine';
import { alertLinker } from './link';
import { DeliveryWorker } from './worker';

export type Alerting = {
  engine: AlertEngine;
  worker: DeliveryWorker;
  stop(): Promise<void>;
};

export function startAlerting(options: { store: Store; config: Config; workerId: string; log: Logger; clock?: Clock; retryBaseMs?: number; retryMaxMs?: number }): Alerting {
  const linkOf = alertLinker(options.config.alerts.publicUrl);
  const engine = new AlertEngine({ store: options.store, linkOf, log: options.log, clock: options.clock });
  const worker = new DeliveryWorker({ store: options.store, config: options.config.alerts, workerId: options.workerId, linkOf, log: options.log, clock: options.clock, retryBaseMs: options.retryBaseMs, retryMaxMs: options.retryMaxMs });
  const stop = new AbortController();
  const runs = [engine.run(stop.signal), worker.run(stop.signal)].map((run) => run.catch((error: unknown) => options.log.error({ err: error }, `stopped: ${(error as Error)?.message ?? error}`)));
  let stopping: Promise<void> | null = null;
  return {
    engine,
    worker,
    stop() {
      stopping ??= (async () => {
        stop.abort();
        await Promise.all(runs);
        await worker.close();
      })();
      return stopping;
    },
  };
}
