// The lease contract, one suite for every backend (PostgreSQL, Redis, a Redlock quorum,
// etcd), on real servers. Network partitions are made with a TCP proxy in front of the
// real server that drops every byte.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BackendUnavailableError,
  LeaseAbortedError,
  LeaseLostError,
  createLeaderElector,
  createLeaseClient,
  type Lease,
  type LeaseClient,
} from '../../lib/lease';
import { backendsUnderTest, type BackendUnderTest } from '../support/lease-backends';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(backendsUnderTest())('lease contract: $name', (backend: BackendUnderTest) => {
  const { ttlMs } = backend;
  const opened: LeaseClient[] = [];
  const proxies: TcpProxy[] = [];
  const client = (callTimeoutMs?: number) => {
    const created = createLeaseClient(backend.options(undefined, callTimeoutMs));
    opened.push(created);
    return created;
  };
  /** A client whose every connection goes through a proxy that can partition it from the servers. */
  const partitionableClient = async (callTimeoutMs: number) => {
    const mine = await Promise.all(backend.targets().map((t) => startTcpProxy(t.host, t.port)));
    proxies.push(...mine);
    const created = createLeaseClient(backend.options(mine.map((p) => ({ host: '127.0.0.1', port: p.port })), callTimeoutMs));
    opened.push(created);
    return { client: created, partition: (on: boolean) => mine.forEach((p) => p.partition(on)) };
  };

  beforeAll(() => backend.setup());
  afterEach(async () => {
    for (const proxy of proxies.splice(0)) proxy.partition(false);
  });
  afterAll(async () => {
    // Proxies first: closing them ends any connection a partition left hanging.
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    await Promise.all(opened.splice(0).map((c) => c.close().catch(() => {})));
    await backend.teardown();
  });

  it('grants a free key with a token, records the holder with an instance suffix, and inspect shows it', async () => {
    const a = client();
    const key = backend.key('grant');
    const before = Date.now();
    const lease = await a.acquire(key, { holder: 'worker-7', ttlMs });
    expect(lease).not.toBeNull();
    expect(typeof lease!.token).toBe('bigint');
    expect(lease!.holder).toBe(`worker-7:${a.instance}`);
    expect(lease!.expiresAt.getTime()).toBeGreaterThanOrEqual(before + ttlMs - 50);
    expect(lease!.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + ttlMs);
    const seen = await client().inspect(key);
    expect(seen).toMatchObject({ key, holder: lease!.holder, token: lease!.token });
    expect(seen!.remainingMs).toBeGreaterThan(0);
    expect(seen!.remainingMs).toBeLessThanOrEqual(Math.ceil(ttlMs / 1000) * 1000);
    expect(await a.release(lease!)).toBe(true);
    expect(await a.inspect(key)).toBeNull();
  });

  it('does not grant a held key to anyone else, nor to a second client with the same name', async () => {
    const key = backend.key('held');
    const lease = await client().acquire(key, { holder: 'same-name', ttlMs });
    expect(lease).not.toBeNull();
    expect(await client().acquire(key, { holder: 'other', ttlMs })).toBeNull();
    expect(await client().acquire(key, { holder: 'same-name', ttlMs })).toBeNull();
  });

  it('20 contenders never hold the same key at once, and tokens strictly increase', async () => {
    const key = backend.key('contend');
    const contenders = Array.from({ length: 20 }, () => client());
    let holding: string | null = null;
    let overlaps = 0;
    const tokens: bigint[] = [];
    await Promise.all(
      contenders.map(async (contender, index) => {
        for (let round = 0; round < 2; round++) {
          const lease = await contender.acquire(key, { holder: `c${index}`, ttlMs: ttlMs * 10, waitMs: 60_000, retryEveryMs: 15 });
          expect(lease).not.toBeNull();
          if (holding !== null) overlaps++;
          holding = lease!.holder;
          tokens.push(lease!.token);
          await sleep(2 + Math.random() * 8);
          // Stop acting before releasing: from here on, someone else may hold it.
          holding = null;
          expect(await contender.release(lease!)).toBe(true);
        }
      }),
    );
    expect(overlaps).toBe(0);
    expect(tokens).toHaveLength(40);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!, `token ${tokens[i]} after ${tokens[i - 1]}`).toBe(true);
  }, 120_000);

  it('a non-owner can neither renew nor release, and the owner keeps the lease', async () => {
    const key = backend.key('owner');
    const owner = client();
    const lease = (await owner.acquire(key, { holder: 'owner', ttlMs }))!;
    const intruder = client();
    const forgedHolder: Lease = { ...lease, holder: `intruder:${intruder.instance}` };
    const forgedToken: Lease = { ...lease, token: lease.token + 1n };
    for (const forged of [forgedHolder, forgedToken]) {
      await expect(intruder.renew(forged)).rejects.toBeInstanceOf(LeaseLostError);
      expect(await intruder.release(forged)).toBe(false);
    }
    expect(await owner.inspect(key)).toMatchObject({ holder: lease.holder, token: lease.token });
    await expect(owner.renew(lease)).resolves.toMatchObject({ token: lease.token });
    expect(await owner.release(lease)).toBe(true);
  });

  it('renew extends the lease past its first TTL', async () => {
    const key = backend.key('renew');
    const owner = client();
    let lease = (await owner.acquire(key, { holder: 'renewer', ttlMs }))!;
    const first = lease.validUntil;
    for (let i = 0; i < 3; i++) {
      await sleep(ttlMs / 2);
      lease = await owner.renew(lease);
    }
    expect(lease.validUntil).toBeGreaterThan(first + ttlMs / 2);
    expect(await owner.inspect(key)).toMatchObject({ holder: lease.holder, token: lease.token });
  });

  it('renew after expiry fails; expiry frees the key; the next grant has a higher token', async () => {
    const key = backend.key('expiry');
    const first = client();
    const lease = (await first.acquire(key, { holder: 'sleeper', ttlMs }))!;
    await sleep(ttlMs + backend.expiryGraceMs);
    await expect(first.renew(lease)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await first.release(lease)).toBe(false);
    const next = await client().acquire(key, { holder: 'successor', ttlMs });
    expect(next).not.toBeNull();
    expect(next!.token > lease.token).toBe(true);
    // The old holder's late renewal must not extend the successor's lease either.
    await expect(first.renew(lease)).rejects.toBeInstanceOf(LeaseLostError);
  }, 30_000);

  it('release frees the key at once, and the next grant has a higher token', async () => {
    const key = backend.key('release');
    const first = client();
    const lease = (await first.acquire(key, { holder: 'leaver', ttlMs: ttlMs * 10 }))!;
    expect(await first.release(lease)).toBe(true);
    expect(await first.release(lease)).toBe(false);
    const next = await client().acquire(key, { holder: 'next', ttlMs });
    expect(next!.token > lease.token).toBe(true);
  });

  it('a signal cancels a wait for the key, and an aborted signal touches nothing', async () => {
    const key = backend.key('signal');
    await client().acquire(key, { holder: 'blocker', ttlMs: ttlMs * 20 });
    const waiter = client();
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 150);
    await expect(waiter.acquire(key, { holder: 'waiter', ttlMs, waitMs: 60_000, signal: controller.signal })).rejects.toBeInstanceOf(LeaseAbortedError);
    expect(performance.now() - started).toBeLessThan(1_500);
    await expect(waiter.acquire(backend.key('untouched'), { holder: 'w', ttlMs, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      LeaseAbortedError,
    );
  });

  it('a server that refuses connections fails fast with BackendUnavailableError', async () => {
    const dead = createLeaseClient(backend.options(backend.targets().map(() => ({ host: '127.0.0.1', port: 1 })), 3_000));
    opened.push(dead);
    const started = performance.now();
    await expect(dead.acquire(backend.key('dead'), { holder: 'h', ttlMs })).rejects.toBeInstanceOf(BackendUnavailableError);
    expect(performance.now() - started).toBeLessThan(3_500);
  });

  it('a partitioned server fails every call by its deadline instead of hanging', async () => {
    const { client: cut, partition } = await partitionableClient(800);
    const key = backend.key('partition');
    const lease = (await cut.acquire(key, { holder: 'cut', ttlMs: ttlMs * 10 }))!;
    partition(true);
    for (const attempt of [() => cut.renew(lease), () => cut.acquire(backend.key('p2'), { holder: 'cut', ttlMs }), () => cut.inspect(key)]) {
      const started = performance.now();
      await expect(attempt()).rejects.toBeInstanceOf(BackendUnavailableError);
      expect(performance.now() - started).toBeLessThan(1_500);
    }
    partition(false);
  });

  describe('leader election', () => {
    const electorTiming = () => ({ ttlMs: Math.max(ttlMs, 600), renewEveryMs: Math.max(ttlMs, 600) / 6 });

    it('one candidate leads with a token; when it resigns, another takes over with a higher token', async () => {
      const key = backend.key('elect');
      const events: string[] = [];
      const tokens = new Map<string, bigint>();
      const controllers = ['a', 'b', 'c'].map(() => new AbortController());
      const runs = ['a', 'b', 'c'].map((name, index) =>
        createLeaderElector({
          client: client(),
          key,
          holder: name,
          ...electorTiming(),
          onStartedLeading: (_signal, token) => {
            events.push(`start ${name}`);
            tokens.set(name, token);
          },
          onStoppedLeading: () => events.push(`stop ${name}`),
        }).run(controllers[index]!.signal),
      );
      try {
        await expect.poll(() => events.length, { timeout: 10_000 }).toBe(1);
        const first = events[0]!.split(' ')[1]!;
        controllers[['a', 'b', 'c'].indexOf(first)]!.abort();
        await expect.poll(() => events.length, { timeout: 10_000 }).toBe(3);
        expect(events[1]).toBe(`stop ${first}`);
        const second = events[2]!.split(' ')[1]!;
        expect(second).not.toBe(first);
        expect(tokens.get(second)! > tokens.get(first)!).toBe(true);
      } finally {
        controllers.forEach((c) => c.abort());
        await Promise.all(runs);
      }
      // Every start is followed by its stop, and no two leaders overlapped.
      let leading: string | null = null;
      for (const event of events) {
        const [kind, name] = event.split(' ');
        if (kind === 'start') {
          expect(leading).toBeNull();
          leading = name!;
        } else {
          expect(leading).toBe(name);
          leading = null;
        }
      }
      expect(leading).toBeNull();
    }, 60_000);

    it('a leader cut off from the backend stops leading before anyone else can start', async () => {
      const key = backend.key('cutoff');
      const timing = electorTiming();
      const { client: cutClient, partition } = await partitionableClient(2_000);
      const log: { event: string; at: number }[] = [];
      const mark = (event: string) => {
        log.push({ event, at: performance.now() });
      };
      const stop = new AbortController();
      const elector = (name: string, leaseClient: LeaseClient) =>
        createLeaderElector({
          client: leaseClient,
          key,
          holder: name,
          ...timing,
          onStartedLeading: () => mark(`${name} started`),
          onStoppedLeading: () => mark(`${name} stopped`),
          onError: () => {},
        }).run(stop.signal);
      const runs = [elector('a', cutClient)];
      try {
        await expect.poll(() => log.length, { timeout: 10_000 }).toBe(1);
        runs.push(elector('b', client()));
        await sleep(timing.ttlMs); // a renews happily; b waits
        expect(log.map((l) => l.event)).toEqual(['a started']);
        mark('partition');
        partition(true);
        await expect
          .poll(() => log.some((l) => l.event === 'b started'), { timeout: timing.ttlMs * 4 + backend.expiryGraceMs + 5_000 })
          .toBe(true);
        const at = (event: string) => log.find((l) => l.event === event)!.at;
        expect(at('a stopped')).toBeLessThan(at('b started'));
        // a stopped within its renew deadline of the partition, which is shorter than the TTL.
        expect(at('a stopped') - at('partition')).toBeLessThan(timing.ttlMs);
      } finally {
        stop.abort();
        partition(false);
        await Promise.all(runs);
      }
    }, 60_000);

    it('rejects timings that cannot stop in time', () => {
      const base = { client: client(), key: 'k', holder: 'h', onStartedLeading: () => {} };
      expect(() => createLeaderElector({ ...base, ttlMs: 1000, renewEveryMs: 100, renewDeadlineMs: 1000 })).toThrow(RangeError);
      expect(() => createLeaderElector({ ...base, ttlMs: 1000, renewEveryMs: 500, renewDeadlineMs: 550 })).toThrow(RangeError);
    });
  });
});
