// One server of the full-stack demo's fleet, started by scripts/demo.ts (lib/demo/stack-server.ts).
// Configured by the demo through the environment; reports the roles it leads over IPC.
import { runStackServer, STACK_BACKENDS, type StackBackend } from '../lib/demo/stack-server';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) {
    console.error(`demo-server: ${name} is not set (this process is started by scripts/demo.ts)`);
    process.exit(2);
  }
  return value;
};
const name = env('LEASEHOLD_DEMO_SERVER');
const backends = env('LEASEHOLD_DEMO_BACKENDS')
  .split(',')
  .filter((b): b is StackBackend => (STACK_BACKENDS as readonly string[]).includes(b));

const server = runStackServer({
  name,
  backends,
  pgUrl: process.env.LEASEHOLD_DEMO_PG_URL ?? '',
  redisUrl: process.env.LEASEHOLD_DEMO_REDIS_URL ?? '',
  etcdEndpoints: (process.env.LEASEHOLD_DEMO_ETCD_ENDPOINTS ?? '').split(',').filter(Boolean),
  zookeeper: process.env.LEASEHOLD_DEMO_ZOOKEEPER ?? '',
  faults: process.env.LEASEHOLD_DEMO_FAULTS !== 'off',
  log: (line) => console.log(`[${name}] ${line}`),
  // Once the demo has gone the channel is closed: sending then would throw.
  onLeading: (role, leading) => void (process.connected && process.send?.({ type: 'leading', role, leading }, () => {})),
});

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void server.stop().finally(() => process.exit(0));
  });
}
// The demo went away without stopping this server (it was killed): stop too.
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
