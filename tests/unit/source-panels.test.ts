// What the sources page shows of a backend's own status is shaped by its kind's descriptor
// (lib/sources/<kind>/panel.ts) on the server, and rendered by one component for all kinds.
// The status is stored JSON from whichever collector wrote it: read defensively.
import { describe, expect, it } from 'vitest';
import { sourcePanelSchema, type SourcePanel } from '../../lib/domain/schemas';
import { BACKEND_DESCRIPTORS, sourcePanel } from '../../lib/sources/backends';
import type { BackendDescriptor } from '../../lib/sources/backend';

const shown = (backend: string, detail: unknown): SourcePanel | null => {
  const panel = sourcePanel(backend, detail);
  if (panel) expect(sourcePanelSchema.parse(panel)).toEqual(panel);
  return panel;
};
const texts = (panel: SourcePanel | null) => ({
  facts: Object.fromEntries((panel?.facts ?? []).map((fact) => [fact.label, fact.value.text])),
  rows: (panel?.table?.rows ?? []).map((row) => row.cells.map((cell) => cell.text)),
});

describe('the panels of the registered kinds', () => {
  it('etcd: the leader member, Raft term and index, the members with the leader marked', () => {
    const panel = shown('etcd', {
      leader: '8e9e05c52164694d',
      raftTerm: '7',
      raftIndex: '1234',
      version: '3.6.4',
      members: [
        { id: '8e9e05c52164694d', name: 'infra1', clientURLs: ['http://127.0.0.1:2379'], isLeader: true },
        { id: '91bc3c398fb3c146', name: '', clientURLs: [], isLeader: false },
      ],
    });
    expect(panel?.title).toBe('etcd cluster');
    expect(texts(panel)).toEqual({
      facts: { 'Leader member': 'infra1', 'Raft term': '7', 'Raft index': '1234', Version: '3.6.4' },
      rows: [
        ['infra1', '8e9e05c52164694d', 'http://127.0.0.1:2379', 'leader'],
        ['(not started)', '91bc3c398fb3c146', '—', 'follower'],
      ],
    });
    expect(panel?.table?.rows.map((row) => row.state)).toEqual(['leader', 'follower']);
    expect(panel?.table?.rows[0]?.highlight).toBe(true);
  });

  it('etcd without a leader says so, in red', () => {
    const panel = shown('etcd', { leader: '0', raftTerm: '9', members: [{ id: 'a', name: 'infra1', clientURLs: [], isLeader: false }] });
    expect(panel?.facts[0]).toEqual({ label: 'Leader member', value: { text: 'none (no leader)', tone: 'bad' } });
  });

  it('Redis: each instance up or down, and a Redlock below its quorum in red', () => {
    const panel = shown('redis', {
      mode: 'redlock',
      quorum: 2,
      instances: [
        { instance: 'redis://127.0.0.1:6379', up: true, error: null, keyspaceNotifications: true },
        { instance: 'redis://127.0.0.1:6380', up: false, error: 'connect ECONNREFUSED', keyspaceNotifications: null },
        { instance: 'redis://127.0.0.1:6381', up: false, error: 'timeout', keyspaceNotifications: false },
      ],
    });
    expect(panel?.title).toBe('Redlock instances');
    expect(panel?.note).toEqual({ text: '1 of 3 answering, quorum 2', tone: 'bad' });
    expect(panel?.table?.rows.map((row) => row.state)).toEqual(['up', 'down', 'down']);
    expect(texts(panel).rows[1]).toEqual(['redis://127.0.0.1:6380', 'down', '—', 'connect ECONNREFUSED']);
    expect(shown('redis', { mode: 'single', instances: [{ instance: 'redis://127.0.0.1:6379', up: true, error: null, keyspaceNotifications: false }] })?.note).toEqual({ text: '1 of 1 answering', tone: 'muted' });
  });

  it('PostgreSQL: its server version', () => {
    expect(texts(shown('postgres', { serverVersion: '18.6' }))).toEqual({ facts: { 'Server version': '18.6' }, rows: [] });
  });

  it('a status of the wrong shape is read as far as it goes, never trusted, never thrown on', () => {
    const hostile = [
      { leader: { $gt: 1 }, raftTerm: 2n ** 70n, members: 'everyone' },
      { leader: '1', members: [null, 7, { id: 5, name: ['x'], clientURLs: 'http://a', isLeader: 'yes' }] },
      { instances: [null, { instance: 42, up: 'maybe', error: { text: 'x' } }], mode: 'redlock', quorum: '2' },
      { serverVersion: null },
    ];
    for (const backend of ['etcd', 'redis', 'postgres'])
      for (const detail of [...hostile, null, 'text', 12, [], {}]) expect(() => shown(backend, detail), `${backend} ${String(detail)}`).not.toThrow();
    expect(texts(shown('etcd', hostile[1]))).toMatchObject({ rows: [['(not started)', '5', '—', 'follower']] });
    expect(texts(shown('redis', hostile[2]))).toMatchObject({ rows: [['42', 'unknown', '—', '—']] });
  });

  it('a kind without a panel of its own, or a status its panel cannot read: the plain values as facts', () => {
    expect(texts(shown('zookeeper', { ensemble: 'zk1:2181', quorum: true, nested: { x: 1 } }))).toEqual({ facts: { ensemble: 'zk1:2181', quorum: 'yes' }, rows: [] });
    expect(texts(shown('etcd', { note: 'no cluster status' }))).toEqual({ facts: { note: 'no cluster status' }, rows: [] });
    expect(shown('etcd', null)).toBeNull();
    expect(shown('redis', { nested: { only: 1 } })).toBeNull();
  });

  it("a new kind's panel comes from its descriptor alone (the browser has nothing to learn)", () => {
    const toy: BackendDescriptor = {
      ...BACKEND_DESCRIPTORS[0]!,
      kind: 'toy-map',
      title: 'Toy map',
      panel: (detail) => ({ title: 'Toy map', note: null, facts: [{ label: 'Entries', value: { text: String((detail as { size: number }).size) } }], table: null }),
    };
    expect(sourcePanel('toy-map', { size: 3 }, [...BACKEND_DESCRIPTORS, toy])).toEqual({ title: 'Toy map', note: null, facts: [{ label: 'Entries', value: { text: '3' } }], table: null });
  });
});
