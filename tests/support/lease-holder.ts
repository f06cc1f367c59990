// A lease holder as its own OS process, so tests can kill it for real (SIGKILL) or stop it
// gracefully (SIGTERM: it releases, then exits). It takes the lease (waiting for it), keeps
// it renewed, and reports over IPC: {type:'held', holder, token}.
// With `report`, it posts its timings to Leasehold's telemetry endpoint at `url` with lib/lease's
// reporter; with `zombie`, its code also says every 200 ms that it holds the lease (for 2 s)
// and never learns otherwise: a process that wakes from a stop still acting as the holder.
import { createLeaderElector, createLeaseClient, createLeaseReporter, type LeaseClientOptions } from '../../lib/lease';
import type { HolderOptions } from './holder-process';

type HolderConfig = { lease: LeaseClientOptions; key: string; holder: string } & HolderOptions;
const config = JSON.parse(process.env.LEASEHOLD_HOLDER ?? '{}') as HolderConfig;
const send = (message: Record<string, unknown>) => process.send?.(message);
const reporter = config.report ? createLeaseReporter({ url: config.report.url, token: 'test', source: config.report.source, flushEveryMs: 1_000, onError: () => {} }) : null;
const client = createLeaseClient({ ...config.lease, onTiming: reporter?.listener });
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
    const held = lease;
    if (config.report?.zombie) setInterval(() => reporter!.claim({ key: config.key, holder: held.holder, token: held.token, claims: true, forMs: 2_000 }), 200).unref();
    while (!stop.signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, config.renewEveryMs));
      if (stop.signal.aborted) break;
      lease = await client.renew(lease).catch(() => lease!);
    }
    await client.release(lease);
  }
}
await reporter?.close();
await client.close();
process.exit(0);
