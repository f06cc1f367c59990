// The composition root (lib/root): what a process holds once is held by a root, which a test
// makes for itself; two roots share nothing; closing one stops what it holds, last made first.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRoot, loadAppConfig, processRoot, useRoot } from '../../lib/root';
import { part } from '../../lib/parts';
import { admitStreamClient, openStreamCount } from '../../lib/live/stream';

const config = () => loadAppConfig({ env: {}, cwd: '/nonexistent' });
const LIMITS = { maxClients: 10, maxClientsPerAddress: 10 };

describe('a composition root', () => {
  it('is made by whoever needs one, and two share nothing: bus, parts, stream slots', () => {
    const a = createRoot({ config: config() });
    const b = createRoot({ config: config() });
    expect(a.bus).not.toBe(b.bus);
    const heard: unknown[] = [];
    b.bus.subscribe((message) => heard.push(message));
    a.bus.publish({ type: 'source', source: { name: 's', backend: 'redis', status: 'up', lastGoodReadAt: null, lastError: null, lastPollMs: null } });
    expect(heard).toEqual([]);
    const counter = part('counter', () => ({ n: 0 }));
    a.part(counter).n += 1;
    expect(a.part(counter).n).toBe(1);
    expect(b.part(counter).n).toBe(0);
    const slot = admitStreamClient(a, '127.0.0.1', LIMITS);
    expect(openStreamCount(a)).toBe(1);
    expect(openStreamCount(b)).toBe(0);
    if (slot.ok) slot.release();
  });

  it('runs one collector, handed its config, clock, bus and logger; closing stops it, then its parts, last made first, without opening a store', async () => {
    const root = createRoot({ config: config() });
    const stopped: string[] = [];
    let wired: unknown;
    const collector = root.runCollector((wiring) => {
      wired = wiring;
      return { id: 'c-1', stop: async () => void stopped.push('collector') };
    });
    expect(wired).toEqual({ config: root.config, clock: root.clock, bus: root.bus, logger: root.log });
    expect(root.runCollector(() => ({ id: 'c-2', stop: async () => {} }))).toBe(collector);
    expect(root.collector()?.id).toBe('c-1');
    root.part(part('first', () => 1, () => void stopped.push('first')));
    root.part(part('second', () => 2, () => void stopped.push('second')));
    await root.close();
    expect(stopped).toEqual(['collector', 'second', 'first']);
    expect(root.collector()).toBeUndefined();
  });

  it('starts no collector once it is stopping: a shutdown during boot leaves none running behind close()', async () => {
    const root = createRoot({ config: config() });
    await root.close();
    let started = false;
    const collector = root.runCollector(() => {
      started = true;
      return { id: 'late', stop: async () => {} };
    });
    expect(collector).toBeUndefined();
    expect(started).toBe(false);
    expect(root.collector()).toBeUndefined();
  });

  it('knows a part by its name: the copy of a module in another Next bundle finds what this one made', () => {
    const root = createRoot({ config: config() });
    // What two copies of one module declare (boot starts the demo, a route shows it).
    const declared = () => part('copied part', () => ({ running: false }));
    root.part(declared()).running = true;
    expect(root.part(declared()).running).toBe(true);
  });

  it('stops every part even when one fails, then says so', async () => {
    const root = createRoot({ config: config() });
    const stopped: string[] = [];
    root.part(part('fine', () => 1, () => void stopped.push('fine')));
    root.part(part('broken', () => 2, () => Promise.reject(new Error('the pool would not close'))));
    const closed: string[] = [];
    const store = { close: async () => void closed.push('store') } as unknown as Parameters<typeof createRoot>[0]['store'];
    const withStore = createRoot({ config: config(), store });
    withStore.part(part('broken', () => 2, () => Promise.reject(new Error('the pool would not close'))));
    await expect(root.close()).rejects.toThrow('the pool would not close');
    expect(stopped).toEqual(['fine']);
    // The store is closed all the same.
    await expect(withStore.close()).rejects.toThrow('the pool would not close');
    expect(closed).toEqual(['store']);
  });

  it("the process's root is the one installed (boot's, or a test's), made from the config on first use otherwise", () => {
    const mine = createRoot({ config: config() });
    const before = useRoot(mine);
    try {
      expect(processRoot()).toBe(mine);
      useRoot(undefined);
      const made = processRoot();
      expect(made).not.toBe(mine);
      expect(processRoot()).toBe(made);
    } finally {
      useRoot(before);
    }
  });
});

// What a process holds is on the root. globalThis is left to the root's one slot (Next gives
// each route its own copy of every module) and to what is one per process by nature: the log
// destination, prom-client's registry that /metrics scrapes, and the secrets every log line
// is scrubbed of (learnt from any config this process loads).
describe('state held on globalThis in lib/', () => {
  it('is the root and the three process-wide pieces, nothing else', () => {
    const lib = path.resolve(import.meta.dirname, '../../lib');
    const holders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (name === 'generated') continue;
        if (statSync(file).isDirectory()) walk(file);
        else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name)) {
          const code = readFileSync(file, 'utf8')
            .split('\n')
            .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
            .join('\n');
          if (code.includes('globalThis')) holders.push(path.relative(lib, file));
        }
      }
    };
    walk(lib);
    expect(holders.sort()).toEqual(['log.ts', 'metrics/index.ts', 'redact.ts', 'root/index.ts']);
  });
});
