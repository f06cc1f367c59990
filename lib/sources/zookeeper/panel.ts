// ZooKeeper's panel on the sources page: each server as its four-letter words described it
// (read.ts/words.ts report { servers, unreachable, mode, zxid, sessionTimeoutMs }).
import type { SourcePanel } from '../../domain/schemas/source-panel';
import { cell, isObject, textOf } from '../status-panel';

/** A latency as a person reads it: 16.499 ms is 16.5 ms. */
const tenths = (ms: number) => String(Math.round(ms * 10) / 10);

export function zookeeperPanel(detail: unknown): SourcePanel | null {
  if (!isObject(detail) || !Array.isArray(detail.servers)) return null;
  const servers = detail.servers.filter(isObject);
  const unreachable = Array.isArray(detail.unreachable) ? detail.unreachable.map(textOf).filter((s): s is string => s !== null) : [];
  const timeout = typeof detail.sessionTimeoutMs === 'number' ? `${detail.sessionTimeoutMs} ms` : null;
  return {
    title: 'ZooKeeper ensemble',
    note: unreachable.length > 0 ? cell(`Not answering: ${unreachable.join(', ')}`, { tone: 'bad' }) : null,
    facts: [
      { label: 'Mode', value: cell(textOf(detail.mode), { mono: true }) },
      { label: 'Last zxid', value: cell(textOf(detail.zxid), { mono: true }) },
      ...(timeout ? [{ label: 'Observer session timeout', value: cell(timeout, { mono: true }) }] : []),
    ],
    table: {
      name: 'Servers',
      columns: ['Server', 'Mode', 'Latency avg/max', 'Outstanding', 'Connections'],
      rows: [
        ...servers.map((server) => {
          const problem = textOf(server.problem);
          const mode = textOf(server.mode);
          const latency = typeof server.latencyAvgMs === 'number' ? `${tenths(server.latencyAvgMs)} / ${typeof server.latencyMaxMs === 'number' ? tenths(server.latencyMaxMs) : '?'} ms` : null;
          return {
            cells: [cell(textOf(server.server), { mono: true }), problem ? cell(problem, { tone: 'muted' }) : cell(mode, { badge: mode === 'leader' || mode === 'standalone' ? 'ok' : undefined }), cell(latency, { mono: true }), cell(textOf(server.outstanding), { mono: true }), cell(textOf(server.connections), { mono: true })],
            highlight: mode === 'leader' || mode === 'standalone',
            state: mode ?? 'unknown',
          };
        }),
        ...unreachable.map((server) => ({ cells: [cell(server, { mono: true }), cell('not answering', { badge: 'bad' }), cell(null), cell(null), cell(null)], highlight: false, state: 'down' })),
      ],
      empty: 'No server answered its four-letter words.',
    },
  };
}
