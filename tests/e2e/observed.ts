// What the "observing" test server watches (tests/e2e/serve.ts): unique per run, so leases
// left by an earlier run of the same services never show up.
const run = process.env.LEASEHOLD_E2E_RUN ?? (process.env.LEASEHOLD_E2E_RUN = Math.random().toString(36).slice(2, 8));

export const OBSERVED = {
  redisSource: 'redis-e2e',
  redisPrefix: `e2e${run}:`,
  etcdSource: 'etcd-e2e',
  etcdPrefix: `e2e${run}/`,
  // Curator's locks under a path of the test ZooKeeper (tests/e2e/zookeeper.spec.ts).
  zookeeperSource: 'zk-e2e',
  zookeeperPath: `/e2e${run}`,
  // A Redis of its own that the console tests stop and resume (tests/e2e/console-live.spec.ts);
  // it is down until that test starts it, as a source can be.
  flakySource: 'redis-flaky',
  flakyPort: 16389,
  flakyPrefix: `e2e${run}:`,
  // The lease table the postgres server watches (admin actions are tried on it).
  pgSource: 'pg-e2e',
  pgTable: `e2e_leases_${run}`,
};
