// One worker of the fencing checker, run as its own OS process so the harness can pause
// (SIGSTOP/SIGCONT) and kill (SIGKILL) it for real. It campaigns for leadership and, while
// it believes it leads, does "work" and then writes to the fenced store with its token.
// Like real code, it checks that it still leads *before* the work, not between the work
// and the write: a pause there is exactly what fencing is for.
//
// Every step is reported to the harness over IPC: {type:'intent'} before the work, and
// {type:'result'} with what the store said.
import { createFencedStore, createLeaderElector, createLeaseClient, type LeaseClientOptions } from '../../lib/lease';

type WorkerConfig = {
  name: string;
  lease: LeaseClientOptions;
  key: string;
  ttlMs: number;
  renewEveryMs: number;
  storeUrl: string;
  storeTable: string;
  checkTokens: boolean;
  resource: string;
  workMs: number;
};

const config = JSON.parse(process.env.LEASEHOLD_WORKER ?? '{}') as WorkerConfig;
const send = (message: Record<string, unknown>) => process.send?.(message);

const client = createLeaseClient(config.lease);
const store = createFencedStore({ url: config.storeUrl, table: config.storeTable, checkTokens: config.checkTokens });
const stop = new AbortController();
process.on('disconnect', () => stop.abort());
process.on('SIGTERM', () => stop.abort());

let sequence = 0;
await createLeaderElector({
  client,
  key: config.key,
  holder: config.name,
  ttlMs: config.ttlMs,
  renewEveryMs: config.renewEveryMs,
  onError: () => {},
  onStartedLeading: async (leading, token) => {
    send({ type: 'leading', token: token.toString() });
    while (!leading.aborted) {
      const value = `${config.name}#${++sequence}`;
      send({ type: 'intent', value, token: token.toString() });
      await new Promise((resolve) => setTimeout(resolve, config.workMs));
      let outcome: string;
      try {
        outcome = await store.write(config.resource, token, value);
      } catch {
        outcome = 'unknown';
      }
      send({ type: 'result', value, token: token.toString(), outcome });
    }
  },
}).run(stop.signal);
await Promise.allSettled([client.close(), store.close()]);
process.exit(0);
