// The read side against a running server that observes the test Redis and etcd: a lease
// taken by lib/lease shows up in the API and on the live stream, the CLI reads it over
// HTTP, /metrics counts it, and bad requests get JSON errors.
import { expect, test } from '@playwright/test';
import { createLeaseClient } from '../../lib/lease';
import { cli } from '../support/run';
import { testServices } from '../support/services';
import { OBSERVED } from './observed';

const services = testServices();

type Lease = { id: string; holder: string | null; token: string | null; state: string; remainingMs: number | null };

test('a Redis lease taken by lib/lease appears in the API within 2 s, with its holder and token', async ({ request }) => {
  const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
  const key = `${OBSERVED.redisPrefix}weekly-digest`;
  const lease = (await client.acquire(key, { holder: 'worker-7', ttlMs: 30_000 }))!;
  const started = Date.now();
  try {
    let seen: Lease | undefined;
    await expect
      .poll(async () => {
        const body = (await (await request.get(`/api/v1/leases?source=${OBSERVED.redisSource}`)).json()) as { leases: Lease[] };
        seen = body.leases.find((l) => l.id === `${OBSERVED.redisSource}/${key}`);
        return seen?.holder;
      }, { timeout: 2_000, intervals: [100] })
      .toBe(lease.holder);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen).toMatchObject({ state: 'held', token: lease.token.toString() });
    expect(seen!.remainingMs).toBeGreaterThan(25_000);

    const one = await request.get(`/api/v1/leases/${encodeURIComponent(`${OBSERVED.redisSource}/${key}`)}`);
    expect(one.status()).toBe(200);
    expect(await one.json()).toMatchObject({ holder: lease.holder, events: [{ type: 'acquired', holder: lease.holder }] });
    const plain = await request.get(`/api/v1/leases/${OBSERVED.redisSource}/${key}`);
    expect((await plain.json()).id).toBe(`${OBSERVED.redisSource}/${key}`);
  } finally {
    await client.release(lease);
    await client.close();
  }
});

test('the live stream carries an etcd acquisition as it happens', async ({ baseURL }) => {
  const controller = new AbortController();
  const response = await fetch(`${baseURL}/api/v1/stream?source=${OBSERVED.etcdSource}`, { signal: controller.signal });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = '';
  const client = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
  const key = `${OBSERVED.etcdPrefix}scheduler`;
  const lease = (await client.acquire(key, { holder: 'streamed', ttlMs: 10_000 }))!;
  try {
    const deadline = Date.now() + 5_000;
    while (!received.includes('"type":"acquired"') && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 500))]);
      if (chunk && !chunk.done) received += decoder.decode(chunk.value);
    }
    expect(received).toContain('event: lease');
    expect(received).toContain(`"holder":"${lease.holder}"`);
    expect(received).toContain('event: event');
    expect(received).toContain('"type":"acquired"');
  } finally {
    controller.abort();
    await client.release(lease);
    await client.close();
  }
});

/** Reads a stream until `done` holds for what arrived, or 5 s pass; then closes it. */
async function readStream(url: string, done: (text: string) => boolean): Promise<string> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let received = '';
  const deadline = Date.now() + 5_000;
  try {
    while (!done(received) && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), 500))]);
      if (chunk && !chunk.done) received += decoder.decode(chunk.value);
    }
  } finally {
    controller.abort();
  }
  return received;
}

test('the stream resumes after the position of a lease list: a change made before it was opened still arrives, once', async ({ request, baseURL }) => {
  const { position } = (await (await request.get(`/api/v1/leases?source=${OBSERVED.etcdSource}`)).json()) as { position: string };
  expect(position).toMatch(/^[0-9a-f]{8}\.\d+$/);
  const client = createLeaseClient({ backend: 'etcd', endpoints: services.etcdEndpoints });
  const key = `${OBSERVED.etcdPrefix}resumed`;
  const lease = (await client.acquire(key, { holder: 'resumed-holder', ttlMs: 10_000 }))!;
  try {
    // The change is in the list (so it is on the bus) before the stream opens.
    await expect
      .poll(async () => {
        const body = (await (await request.get(`/api/v1/leases?source=${OBSERVED.etcdSource}`)).json()) as { leases: Lease[] };
        return body.leases.find((l) => l.id === `${OBSERVED.etcdSource}/${key}`)?.holder;
      }, { timeout: 5_000 })
      .toBe(lease.holder);
    const url = `${baseURL}/api/v1/stream?source=${OBSERVED.etcdSource}&after=${position}`;
    const text = await readStream(url, (t) => t.includes('"type":"acquired"'));
    const hello = /event: hello\ndata: (.*)\n/.exec(text);
    expect(JSON.parse(hello![1]!)).toEqual({ position, gap: false });
    expect(text.indexOf('event: hello')).toBeLessThan(text.indexOf(`"holder":"${lease.holder}"`));
    expect(text).toContain('"type":"acquired"');
    // Every message carries its position, after the one asked for and increasing.
    const seqs = [...text.matchAll(/^id: [0-9a-f]{8}\.(\d+)$/gm)].map((m) => Number(m[1]));
    expect(seqs[0]).toBe(Number(position.split('.')[1]));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    expect(new Set(seqs).size).toBe(seqs.length);
  } finally {
    await client.release(lease);
    await client.close();
  }
  // A position this server never gave: it says there is a gap rather than pretending.
  const foreign = await readStream(`${baseURL}/api/v1/stream?after=${encodeURIComponent('0bad0bad.1')}`, (t) => t.includes('event: hello'));
  expect(JSON.parse(/event: hello\ndata: (.*)\n/.exec(foreign)![1]!)).toMatchObject({ gap: true });
  const fresh = await readStream(`${baseURL}/api/v1/stream`, (t) => t.includes('event: hello'));
  expect(JSON.parse(/event: hello\ndata: (.*)\n/.exec(fresh)![1]!)).toMatchObject({ gap: false });
});

test('the CLI reads leases and one lease over HTTP', async ({ baseURL }) => {
  const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
  const key = `${OBSERVED.redisPrefix}cli`;
  const lease = (await client.acquire(key, { holder: 'cli-reader', ttlMs: 30_000 }))!;
  const id = `${OBSERVED.redisSource}/${key}`;
  try {
    await expect
      .poll(async () => {
        const result = await cli(['leases', '--json', '--source', OBSERVED.redisSource], { LEASEHOLD_URL: baseURL });
        return (JSON.parse(result.stdout) as { leases: Lease[] }).leases.find((l) => l.id === id)?.holder;
      }, { timeout: 10_000 })
      .toBe(lease.holder);
    const human = await cli(['lease', id], { LEASEHOLD_URL: baseURL });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`holder\\s+${lease.holder}`));
    const sources = await cli(['sources'], { LEASEHOLD_URL: baseURL });
    expect(sources.stdout).toMatch(new RegExp(`${OBSERVED.redisSource}\\s+redis\\s+up`));
    const missing = await cli(['lease', `${OBSERVED.redisSource}/no-such-key`], { LEASEHOLD_URL: baseURL });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`No lease "${OBSERVED.redisSource}/no-such-key" is known.`);
    // A source that does not exist is an error naming it and the sources there are, not an empty list.
    const nope = await cli(['leases', '--source', 'nope'], { LEASEHOLD_URL: baseURL });
    expect(nope.code).toBe(1);
    expect(nope.stderr).toContain('"source" must be the name of a source (');
    expect(nope.stderr).toContain(OBSERVED.redisSource);
    expect(nope.stderr).toContain('not "nope"');
    const unreachable = await cli(['leases'], { LEASEHOLD_URL: 'http://127.0.0.1:31999' });
    expect(unreachable.stderr).toMatch(/cannot reach Leasehold at http:\/\/127\.0\.0\.1:31999 \(ECONNREFUSED\)/);
  } finally {
    await client.release(lease);
    await client.close();
  }
});

test('/metrics counts leases by source and state, and sources up', async ({ request }) => {
  await expect.poll(async () => (await (await request.get('/metrics')).text()), { timeout: 10_000 }).toMatch(
    new RegExp(`leasehold_source_up\\{source="${OBSERVED.redisSource}"\\} 1`),
  );
  const text = await (await request.get('/metrics')).text();
  expect(text).toMatch(/# TYPE leasehold_poll_duration_seconds histogram/);
  expect(text).toMatch(new RegExp(`leasehold_source_owned\\{collector="[^"]+",source="${OBSERVED.etcdSource}"\\} 1`));
  expect(text).toMatch(/leasehold_store_up 1/);
  // A source that has not failed is counted from the start, at 0 (not absent until its first failure).
  expect(text).toMatch(new RegExp(`leasehold_read_failures_total\\{source="${OBSERVED.redisSource}"\\} 0`));
});

test('/metrics has series per lease: holder, remaining time, TTL and token of a lease taken by lib/lease', async ({ request }) => {
  const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
  const key = `${OBSERVED.redisPrefix}metrics`;
  const lease = (await client.acquire(key, { holder: 'metrics-reader', ttlMs: 30_000 }))!;
  const id = `${OBSERVED.redisSource}/${key}`;
  const labels = `lease="${id}",source="${OBSERVED.redisSource}"`;
  try {
    await expect
      .poll(async () => (await (await request.get('/metrics')).text()), { timeout: 10_000 })
      .toContain(`leasehold_lease_holder_info{holder="${lease.holder}",${labels},state="held"} 1`);
    const text = await (await request.get('/metrics')).text();
    expect(text).toContain(`leasehold_lease_token{${labels}} ${lease.token}`);
    const value = (name: string) => Number(new RegExp(`^${name}\\{${labels.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\} ([\\d.]+)$`, 'm').exec(text)?.[1]);
    // Redis tells the time left, not the TTL granted: read once, just after the grant.
    expect(value('leasehold_lease_ttl_seconds')).toBeGreaterThan(28);
    expect(value('leasehold_lease_ttl_seconds')).toBeLessThanOrEqual(30);
    expect(value('leasehold_lease_remaining_seconds')).toBeGreaterThan(20);
    expect(value('leasehold_lease_remaining_seconds')).toBeLessThanOrEqual(30);
    expect(text).toMatch(/leasehold_lease_series_limit 1000/);
  } finally {
    await client.release(lease);
    await client.close();
  }
});

test('bad requests get JSON errors naming what was wrong', async ({ request }) => {
  const cases = [
    { path: '/api/v1/leases?state=sideways', status: 400, error: 'invalid_parameter' },
    { path: '/api/v1/leases?source=nope', status: 400, error: 'invalid_parameter', message: /"source" must be the name of a source \(.*redis-e2e.*\), not "nope"/ },
    { path: '/api/v1/no-such-route', status: 404, error: 'not_found', message: /No API route at "\/api\/v1\/no-such-route"/ },
    { path: '/api/v1/failovers?since=yesterday', status: 400, error: 'invalid_parameter' },
    { path: '/api/v1/leases/nowhere%2Fnothing', status: 404, error: 'not_found' },
    { path: '/api/v1/leases/%E0%A4%A', status: 400, error: 'invalid_path' },
    { path: '/api/v1/leases/just-a-source', status: 400, error: 'invalid_lease_id' },
  ];
  for (const { path, status, error, message } of cases as { path: string; status: number; error: string; message?: RegExp }[]) {
    const response = await request.get(path);
    expect(response.status(), path).toBe(status);
    const body = await response.json();
    expect(body.error, path).toBe(error);
    if (message) expect(body.message, path).toMatch(message);
    expect(body.message).not.toMatch(/at .+:\d+:\d+/);
  }
});
