// A lease holder as its own OS process, so tests can kill it for real (SIGKILL) or stop it
// gracefully (SIGTERM: it releases, then exits). It takes the lease (waiting for it), keeps
// it renewed, and reports over IPC: {type:'held', holder, token}.
import { createLeaderElector, createLeaseClient, type LeaseClientOptions } from '../../lib/lease';

type HolderConfig = { lease: LeaseClientOptions; key: string; holder: string; ttlMs: number; renewEveryMs: number; election?: boolean };
const config = JSON.parse(process.env.LEASEHOLD_HOLDER ?? '{}') as HolderConfig;
const send = (message: Record<string, unknown>) => process.send?.(message);
const client = createLeaseClient(config.lease);
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());
process.on('disconnect', () => stop.abort());

if (config.election) {
  await createLeaderElector({
    client,
    key: config.key,
    holder: config.holder,
    ttlMs: config.ttlMs,
    renewEveryMs: config.renewEveryMs,
    onError: () => {},
    onStartedLeading: (_signal, token) => {
      send({ type: 'held', holder: `${config.holder}:${client.instance}`, token: token.toString() });
    },
  }).run(stop.signal);
} else {
  let lease = await client.acquire(config.key, { holder: config.holder, ttlMs: config.ttlMs, waitMs: 120_000, retryEveryMs: 100, signal: stop.signal }).catch(() => null);
  if (lease) {
    send({ type: 'held', holder: lease.holder, token: lease.token.toString() });
    while (!stop.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, config.renewEveryMs));
      if (stop.signal.aborted) break;
      lease = await client.renew(lease).catch(() => lease!);
    }
    await client.release(lease);
  }
}
await client.close();
process.exit(0);
