import path from 'node:path';
import { expect, test } from '@playwright/test';
import { readMigrations } from '../../lib/db/migrate';

const migrations = readMigrations(path.resolve('prisma/migrations')).map((m) => m.name);

test('GET /api/health: 200, the store kind and every migration applied', async ({ request }, testInfo) => {
  const response = await request.get('/api/health');
  expect(response.status()).toBe(200);
  expect(response.headers()['cache-control']).toContain('no-store');
  const body = await response.json();
  expect(body).toMatchObject({
    status: 'ok',
    store: { kind: testInfo.project.name === 'postgres' ? 'postgres' : 'pglite' },
    migrations: { state: 'up_to_date', pending: [], failed: [], latest: migrations.at(-1), total: migrations.length },
  });
  expect(body.migrations.applied).toBe(body.migrations.total);
  // Nothing about where the store is: no URL, no password, no path.
  expect(JSON.stringify(body)).not.toMatch(/postgres:\/\/|leasehold:leasehold|\/tmp\//);
});

test('GET /api/health/live answers without touching the store', async ({ request }) => {
  const response = await request.get('/api/health/live');
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ status: 'ok' });
});
