// The delivery layer against real receivers: node:http and node:https servers on loopback
// that verify each request with the standardwebhooks package, and the test Alertmanager.
// Every packet goes to 127.0.0.0/8: the refused destinations are never connected to (a
// guarding connector fails the test if anything outside loopback would be).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { buildConnector, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AlertMessage } from '../../lib/domain/alert-types';
import { createEgressAgent, type EgressLookup } from '../../lib/alerts/deliver/egress';
import { buildRequest } from '../../lib/alerts/deliver/formats';
import { generateWebhookSecret } from '../../lib/alerts/deliver/secret';
import { sendWebhook } from '../../lib/alerts/deliver/send';
import { webhookHeaders } from '../../lib/alerts/deliver/sign';
import { testServices } from '../support/services';

// A self-signed certificate for hooks.leasehold.test (valid 2000-2100), made for this test.
const CERT = `-----BEGIN CERTIFICATE-----
MIIBgjCCASigAwIBAgIBATAKBggqhkjOPQQDAjAfMR0wGwYDVQQDDBRob29rcy5s
ZWFzZWhvbGQudGVzdDAgFw0wMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFow
HzEdMBsGA1UEAwwUaG9va3MubGVhc2Vob2xkLnRlc3QwWTATBgcqhkjOPQIBBggq
hkjOPQMBBwNCAARYjJiY/XQObNvhWU/dbt7FzGPSHmWE9xTRNgIAQx/4eFZ7iIge
/PgmRkjPYiFLFNwcwDwEewgEJs+YvUFqQ0Wjo1MwUTAfBgNVHREEGDAWghRob29r
cy5sZWFzZWhvbGQudGVzdDAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBTkOnhb
GgsQo8Vuc3qymCSzsxlQfDAKBggqhkjOPQQDAgNIADBFAiEA4lXUjthj+7Stpj19
WXcdnCzFX6vqXpIEHLourT5rhjcCICLisHLscCRZjU112vI8nbjh3pCj8AGZDWSL
D1Rwba9T
-----END CERTIFICATE-----
`;
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgdwiuwtIVABbJDRSv
oTko5OvP1fLlmOe15uzH9TLw9fKhRANCAARYjJiY/XQObNvhWU/dbt7FzGPSHmWE
9xTRNgIAQx/4eFZ7iIge/PgmRkjPYiFLFNwcwDwEewgEJs+YvUFqQ0Wj
-----END PRIVATE KEY-----
`;

type Received = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string; verified: unknown; verifyError: string | null };

/** A receiver on one loopback address: answers with `respond`, records requests and connections. */
class Receiver {
  readonly requests: Received[] = [];
  connections = 0;
  servernames: (string | false)[] = [];
  private readonly sockets = new Set<Socket>();
  private constructor(
    readonly server: http.Server | https.Server,
    readonly host: string,
    readonly secret: string,
  ) {}

  static async start(options: { host?: string; tls?: boolean; respond?: (req: http.IncomingMessage, res: http.ServerResponse) => void } = {}): Promise<Receiver> {
    const host = options.host ?? '127.0.0.1';
    const secret = generateWebhookSecret();
    const server = options.tls ? https.createServer({ cert: CERT, key: KEY }) : http.createServer();
    const receiver = new Receiver(server, host, secret);
    const respond = options.respond ?? ((_req, res) => res.writeHead(204).end());
    server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket & { servername?: string | false }) => {
      receiver.connections++;
      if (options.tls) receiver.servernames.push(socket.servername ?? false);
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified: unknown = null;
        let verifyError: string | null = null;
        try {
          verified = new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
        } catch (error) {
          verifyError = (error as Error).message;
        }
        receiver.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body, verified, verifyError });
        respond(req, res);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook', host = this.host): string {
    return `${this.server instanceof https.Server ? 'https' : 'http'}://${host}:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** undici's connector, refusing (and recording) anything outside 127.0.0.0/8: a refused destination must never get here. */
function loopbackOnlyConnector(seen: string[]): buildConnector.connector {
  const real = buildConnector({});
  return (options, callback) => {
    seen.push(options.hostname);
    if (!/^127\./.test(options.hostname)) {
      callback(new Error(`test guard: would have connected to ${options.hostname}`), null);
      return;
    }
    real(options, callback);
  };
}

const lookupTo =
  (address: string, calls: string[] = []): EgressLookup =>
  async (hostname) => {
    calls.push(hostname);
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };

function alertMessage(overrides: Partial<AlertMessage['alert']> = {}, type: AlertMessage['type'] = 'alert.firing'): AlertMessage {
  return {
    type,
    at: new Date().toISOString(),
    link: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments',
    alert: {
      id: 'alr_1',
      fingerprint: randomBytes(16).toString('hex'),
      rule: { id: 'rul_1', name: 'payments failover', type: 'failover' },
      severity: 'critical',
      status: 'firing',
      source: 'redis-main',
      leaseId: 'redis-main:locks:payments',
      leaseKey: 'locks:payments',
      holder: 'payments-b',
      previousHolder: 'payments-a',
      token: (2n ** 70n).toString(),
      previousToken: (2n ** 70n - 1n).toString(),
      ttlMs: 10_000,
      marginMs: null,
      gapMs: 1_250,
      summary: 'locks:payments moved from payments-a to payments-b after 1.3 s without a holder',
      startsAt: new Date(Date.now() - 60_000).toISOString(),
      endsAt: null,
      occurrences: 1,
      detail: null,
      ...overrides,
    },
  };
}

const signed = (body: string, secrets: string[]) => webhookHeaders({ id: `msg_${randomBytes(8).toString('hex')}`, timestampSeconds: Math.floor(Date.now() / 1000), body, secrets });

describe('webhook delivery to real receivers on loopback', () => {
  const agents: Dispatcher[] = [];
  const receivers: Receiver[] = [];
  const agent = (options: Parameters<typeof createEgressAgent>[0]) => {
    const created = createEgressAgent(options);
    agents.push(created);
    return created;
  };
  const receiver = async (options: Parameters<typeof Receiver.start>[0] = {}) => {
    const started = await Receiver.start(options);
    receivers.push(started);
    return started;
  };

  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.destroy()));
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });

  it('delivers a signed native message that the standardwebhooks package verifies', async () => {
    const hook = await receiver();
    const built = buildRequest('native', alertMessage(), { endpointUrl: hook.url(), endpointName: 'ops', routingKey: null, resendIntervalMs: 300_000, now: new Date() });
    const result = await sendWebhook({ url: built.url, body: built.body, headers: signed(built.body, [hook.secret]), dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result).toMatchObject({ outcome: 'delivered', status: 204, error: null, retryAfterMs: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(hook.requests).toHaveLength(1);
    const [request] = hook.requests;
    expect(request!.verifyError).toBeNull();
    expect(request!.verified).toEqual(JSON.parse(built.body));
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
  });

  it('signs with both secrets while rotating: a receiver that still has the old one verifies', async () => {
    const hook = await receiver();
    const current = generateWebhookSecret();
    const body = buildRequest('slack', alertMessage(), { endpointUrl: hook.url(), endpointName: 'ops', routingKey: null, resendIntervalMs: 300_000, now: new Date() }).body;
    const result = await sendWebhook({ url: hook.url(), body, headers: signed(body, [current, hook.secret]), dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result.outcome).toBe('delivered');
    expect(hook.requests[0]!.verifyError).toBeNull();
    expect(String(hook.requests[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('fails on a redirect, names its Location, and never follows it', async () => {
    const target = await receiver();
    const redirecting = await receiver({ respond: (_req, res) => res.writeHead(302, { location: target.url('/elsewhere') }).end() });
    const result = await sendWebhook({ url: redirecting.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result.outcome).toBe('failed');
    expect(result.status).toBe(302);
    expect(result.error).toContain(`redirect to ${target.url('/elsewhere')}`);
    expect(result.error).toMatch(/redirects are not followed/);
    expect(redirecting.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it('fails on a 500, with the receiver’s Retry-After and the start of its answer', async () => {
    const hook = await receiver({ respond: (_req, res) => res.writeHead(500, { 'retry-after': '7' }).end('database\u0000 is\r\ndown') });
    const result = await sendWebhook({ url: hook.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result).toMatchObject({ outcome: 'failed', status: 500, retryAfterMs: 7000, responseExcerpt: 'database is down' });
    expect(result.error).toBe(`127.0.0.1:${hook.port} answered HTTP 500`);
  });

  it('reads at most 4 kB of an answer, however long it is', async () => {
    const hook = await receiver({ respond: (_req, res) => res.writeHead(503, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }).end('x'.repeat(2_000_000)) });
    const result = await sendWebhook({ url: hook.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result.outcome).toBe('failed');
    expect(result.responseExcerpt!.length).toBeLessThanOrEqual(4096);
    expect(result.retryAfterMs).toBeGreaterThan(25_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('reports 410 Gone as gone', async () => {
    const hook = await receiver({ respond: (_req, res) => res.writeHead(410).end() });
    const result = await sendWebhook({ url: hook.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result).toMatchObject({ outcome: 'gone', status: 410 });
  });

  it('gives up on a receiver that never answers within the timeout', async () => {
    const hook = await receiver({ respond: () => {} });
    const result = await sendWebhook({ url: hook.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }), timeoutMs: 300 });
    expect(result).toMatchObject({ outcome: 'failed', status: null, error: `127.0.0.1:${hook.port}: no answer within 300 ms` });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(3000);
    expect(hook.requests).toHaveLength(1);
  });

  it('refuses a loopback address outside allowCidrs before connecting', async () => {
    const other = await receiver({ host: '127.0.0.2' });
    const result = await sendWebhook({ url: other.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result).toMatchObject({ outcome: 'refused', status: null, error: 'refused: 127.0.0.2 is a loopback address not in alerts.allowCidrs' });
    expect(other.connections).toBe(0);
    expect(other.requests).toHaveLength(0);
  });

  it.each([
    ['10.1.2.3', 'refused: hooks.example resolves to 10.1.2.3, a private address not in alerts.allowCidrs'],
    ['169.254.169.254', 'refused: hooks.example resolves to 169.254.169.254, a link-local address'],
    ['::ffff:10.0.0.1', 'refused: hooks.example resolves to ::ffff:10.0.0.1, an IPv4-mapped address of 10.0.0.1, a private address'],
    ['fd00::1', 'refused: hooks.example resolves to fd00::1, a unique-local address'],
  ])('refuses a name that resolves to %s, connecting nothing', async (address, message) => {
    const looked: string[] = [];
    const connected: string[] = [];
    const result = await sendWebhook({
      url: 'https://hooks.example/hook?token=secret-in-query',
      body: '{}',
      headers: {},
      dispatcher: agent({ allowCidrs: ['127.0.0.1/32'], lookup: lookupTo(address, looked), connector: loopbackOnlyConnector(connected) }),
    });
    expect(result.outcome).toBe('refused');
    expect(result.error).toContain(message);
    expect(result.error).not.toContain('secret-in-query');
    expect(looked).toEqual(['hooks.example']);
    expect(connected).toEqual([]);
  });

  it('sends plain http to an allowed address, and refuses it to a public-looking name', async () => {
    const hook = await receiver();
    const allowed = await sendWebhook({ url: hook.url(), body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.0/8'] }) });
    expect(allowed.outcome).toBe('delivered');

    const connected: string[] = [];
    const refused = await sendWebhook({
      url: 'http://hooks.example/hook',
      body: '{}',
      headers: {},
      dispatcher: agent({ allowCidrs: ['127.0.0.0/8'], lookup: lookupTo('93.184.216.34'), connector: loopbackOnlyConnector(connected) }),
    });
    expect(refused).toMatchObject({ outcome: 'refused', error: 'refused: http://hooks.example (93.184.216.34) is plain http, which is only allowed to addresses in alerts.allowCidrs: use https' });
    expect(connected).toEqual([]);
  });

  it('connects to the vetted address but checks the certificate against the name (SNI)', async () => {
    const hook = await receiver({ tls: true });
    const looked: string[] = [];
    const dispatcher = agent({ allowCidrs: ['127.0.0.1/32'], lookup: lookupTo('127.0.0.1', looked), ca: CERT });
    const result = await sendWebhook({ url: hook.url('/hook', 'hooks.leasehold.test'), body: '{}', headers: {}, dispatcher });
    expect(result).toMatchObject({ outcome: 'delivered', status: 204 });
    expect(looked).toEqual(['hooks.leasehold.test']);
    expect(hook.servernames).toEqual(['hooks.leasehold.test']);
    expect(hook.requests[0]!.headers.host).toBe(`hooks.leasehold.test:${hook.port}`);

    // The same address under a name the certificate does not carry: TLS refuses it.
    const wrong = await sendWebhook({ url: hook.url('/hook', 'other.leasehold.test'), body: '{}', headers: {}, dispatcher });
    expect(wrong.outcome).toBe('failed');
    expect(wrong.error).toMatch(/other\.leasehold\.test/);
    expect(hook.requests).toHaveLength(1);
  });

  it('sends the URL’s user name and password as Basic auth, and never shows them', async () => {
    const hook = await receiver({ respond: (_req, res) => res.writeHead(401).end() });
    const url = hook.url().replace('http://', 'http://am-user:s3cr%40t@');
    const result = await sendWebhook({ url, body: '{}', headers: {}, dispatcher: agent({ allowCidrs: ['127.0.0.1/32'] }) });
    expect(result.outcome).toBe('failed');
    expect(hook.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('am-user:s3cr@t').toString('base64')}`);
    expect(JSON.stringify(result)).not.toMatch(/s3cr/);
  });
});

// The test Alertmanager (scripts/services.sh starts it on 127.0.0.1:19093).
const alertmanagerUrl = (): string | undefined => testServices().alertmanagerUrl;

describe.skipIf(!alertmanagerUrl())('the alertmanager format against a real Alertmanager', () => {
  const base = alertmanagerUrl()!;
  let dispatcher: Dispatcher;

  beforeAll(() => {
    // Its address must be a loopback one: nothing in this file leaves 127.0.0.0/8.
    expect(new URL(base).hostname).toMatch(/^127\./);
    dispatcher = createEgressAgent({ allowCidrs: ['127.0.0.0/8'] });
  });
  afterAll(async () => {
    await dispatcher?.destroy();
  });

  type GettableAlert = { labels: Record<string, string>; annotations: Record<string, string>; endsAt: string; status: { state: string } };
  async function alertsWith(fingerprint: string): Promise<GettableAlert[]> {
    const filter = encodeURIComponent(`leasehold_fingerprint="${fingerprint}"`);
    const response = await fetch(`${base.replace(/\/+$/, '')}/api/v2/alerts?filter=${filter}`);
    expect(response.status).toBe(200);
    return (await response.json()) as GettableAlert[];
  }

  it('takes a firing alert with its labels, then resolves it', async () => {
    const firing = alertMessage();
    const ctx = { endpointUrl: base, endpointName: 'alertmanager', routingKey: null, resendIntervalMs: 60_000, now: new Date() };
    const sent = buildRequest('alertmanager', firing, ctx);
    expect(sent.url).toBe(`${base.replace(/\/+$/, '')}/api/v2/alerts`);
    const posted = await sendWebhook({ url: sent.url, body: sent.body, headers: {}, dispatcher });
    expect(posted).toMatchObject({ outcome: 'delivered', status: 200 });

    const [seen, ...more] = await alertsWith(firing.alert.fingerprint);
    expect(more).toHaveLength(0);
    expect(seen!.labels).toEqual({
      alertname: 'failover',
      severity: 'critical',
      rule: 'payments failover',
      source: 'redis-main',
      lease: 'locks:payments',
      leasehold_fingerprint: firing.alert.fingerprint,
    });
    expect(seen!.annotations).toMatchObject({ holder: 'payments-b', previous_holder: 'payments-a', token: (2n ** 70n).toString() });
    expect(seen!.status.state).toBe('active');
    expect(Date.parse(seen!.endsAt)).toBeGreaterThan(Date.now() + 3 * 60_000);

    const resolvedAt = new Date().toISOString();
    const resolved = alertMessage({ ...firing.alert, status: 'resolved', endsAt: resolvedAt }, 'alert.resolved');
    const done = buildRequest('alertmanager', resolved, { ...ctx, now: new Date() });
    expect(await sendWebhook({ url: done.url, body: done.body, headers: {}, dispatcher })).toMatchObject({ outcome: 'delivered' });
    // Alertmanager lists only alerts that have not ended: a resolved one is gone from the list.
    expect(await alertsWith(firing.alert.fingerprint)).toEqual([]);
  });

  it('takes a hostile alert (10 kB key, binary holder) without refusing it', async () => {
    const hostile = alertMessage({
      leaseKey: `k${'\u0001\u00ff'.repeat(5000)}\ud800`,
      holder: Array.from({ length: 300 }, (_, i) => String.fromCharCode(i)).join(''),
    });
    const sent = buildRequest('alertmanager', hostile, { endpointUrl: `${base.replace(/\/+$/, '')}/api/v2/alerts/`, endpointName: 'am', routingKey: null, resendIntervalMs: 1_000, now: new Date() });
    expect(await sendWebhook({ url: sent.url, body: sent.body, headers: {}, dispatcher })).toMatchObject({ outcome: 'delivered', status: 200 });
    const [seen] = await alertsWith(hostile.alert.fingerprint);
    expect(seen!.labels.lease!.length).toBeLessThanOrEqual(1024);
  });
});
