// A backend kind is one descriptor (lib/sources/backend.ts) in one list (lib/sources/backends.ts):
// the registry builds its reads, the force registry its actions and the sources page its
// targets from it, and names no kind. Here a toy backend, an in-memory map, is read and acted
// on through the same registries by handing them a list with it added.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../lib/config';
import type { Observation } from '../../lib/domain/observation';
import { describeBackend, type BackendDescriptor } from '../../lib/sources/backend';
import { BACKEND_DESCRIPTORS, backendOf, backendTitles, sourceSchema, sourceTitle } from '../../lib/sources/backends';
import { sourceEntry } from '../../lib/sources/config-parts';
import { createSource } from '../../lib/sources/registry';

type Held = { holder: string; token: bigint; ttlMs: number };
/** The toy's config entry: built like every kind's (name, backend, pollMs), with a map to read. */
const memorySource = sourceEntry('toy-map', { password: z.string(), leases: z.custom<Map<string, Held>>((value) => value instanceof Map) });
type MemoryConfig = z.output<typeof memorySource>;

/** The toy backend: its whole descriptor. */
const memoryBackend: BackendDescriptor = describeBackend<MemoryConfig>({
  kind: 'toy-map',
  title: 'In memory',
  configSchema: memorySource,
  createSource: (config, { defaultPollMs }) => ({
    name: config.name,
    backend: 'toy-map',
    pollMs: defaultPollMs,
    async snapshot() {
      if (config.leases.size === 0) throw new Error(`the map of ${config.password} is empty`);
      const observations: Observation[] = [...config.leases].map(([key, lease]) => ({ key, kind: 'lock', holder: lease.holder, token: lease.token, ttlMs: lease.ttlMs, remainingMs: lease.ttlMs, candidates: [] }));
      return { observations, status: null };
    },
    async close() {},
  }),
  createForce: () => {
    throw new Error('not in this toy');
  },
  endpoints: () => ['toy-map://local'],
  describe: (detail) => `In memory, ${(detail as { size?: number } | null)?.size ?? 0} leases`,
});

describe('backend descriptors', () => {
  it('each registered kind is there once, with a title', () => {
    const kinds = BACKEND_DESCRIPTORS.map((d) => d.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds).toEqual(expect.arrayContaining(['postgres', 'redis', 'etcd']));
    expect(backendTitles()).toMatchObject({ postgres: 'PostgreSQL', redis: 'Redis', etcd: 'etcd' });
    for (const descriptor of BACKEND_DESCRIPTORS) expect(descriptor.title).toMatch(/\S/);
  });

  it('a toy backend added to the list is read through the registry like any other, its secrets scrubbed from its errors', async () => {
    const leases = new Map([['jobs/digest', { holder: 'node-7', token: 42n, ttlMs: 10_000 }]]);
    const config = memorySource.parse({ backend: 'toy-map', name: 'toy', password: 'hunter2-secret', leases });
    const source = createSource(config as unknown as SourceConfig, 1_000, undefined, [...BACKEND_DESCRIPTORS, memoryBackend]);
    expect(source.name).toBe('toy');
    const read = await source.snapshot(AbortSignal.timeout(1_000));
    expect(read.observations).toMatchObject([{ key: 'jobs/digest', holder: 'node-7', token: 42n }]);
    leases.clear();
    const failure = await source.snapshot(AbortSignal.timeout(1_000)).catch((error: unknown) => error as Error);
    expect(String(failure)).not.toContain('hunter2-secret');
  });

  it('a kind nobody registered is refused by name, not read as another', () => {
    const config = { backend: 'toy-map', name: 'toy' } as unknown as SourceConfig;
    expect(() => backendOf(config)).toThrow('source toy: no backend of kind "toy-map" is registered');
    expect(backendOf(config, [memoryBackend]).title).toBe('In memory');
  });

  it("the config file's sources are the registered kinds' entries, and nothing else", () => {
    expect(sourceSchema.options).toHaveLength(BACKEND_DESCRIPTORS.length);
    sourceSchema.options.forEach((option, index) => expect(option).toBe(BACKEND_DESCRIPTORS[index]!.configSchema));
    expect(sourceSchema.safeParse({ name: 'toy', backend: 'toy-map', password: 'x', leases: new Map() }).success).toBe(false);
    expect(memorySource.safeParse({ name: 'toy', backend: 'toy-map', password: 'x', leases: new Map() }).success).toBe(true);
  });

  it('the pages name a kind by its descriptor, and a kind nobody registered by its own name', () => {
    expect(backendTitles([...BACKEND_DESCRIPTORS, memoryBackend])).toMatchObject({ postgres: 'PostgreSQL', 'toy-map': 'In memory' });
    expect(sourceTitle('toy-map', { size: 3 }, [memoryBackend])).toBe('In memory, 3 leases');
    expect(sourceTitle('redis', { mode: 'redlock', instances: [{}, {}, {}] })).toBe('Redis, Redlock over 3 instances');
    expect(sourceTitle('redis', { mode: 'single', instances: [{}] })).toBe('Redis');
    expect(sourceTitle('consul', null)).toBe('consul');
  });
});
