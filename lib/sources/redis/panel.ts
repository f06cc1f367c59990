// Redis' panel on the sources page: its instances as the source last read them (observe.ts
// reports { mode, quorum, instances }): each answering or not, how its changes are seen, its
// last error; a Redlock source says how many answer against its quorum.
import type { SourcePanel } from '../../domain/schemas/source-panel';
import { cell, flagOf, isObject, textOf } from '../status-panel';

export function redisPanel(detail: unknown): SourcePanel | null {
  if (!isObject(detail) || !Array.isArray(detail.instances)) return null;
  const redlock = detail.mode === 'redlock';
  const quorum = typeof detail.quorum === 'number' ? detail.quorum : null;
  const instances = detail.instances.filter(isObject).map((instance) => ({
    instance: textOf(instance.instance) ?? '?',
    up: flagOf(instance.up),
    error: textOf(instance.error),
    keyspaceNotifications: flagOf(instance.keyspaceNotifications),
  }));
  const answering = instances.filter((instance) => instance.up === true).length;
  const belowQuorum = redlock && quorum !== null && answering < quorum;
  return {
    title: redlock ? 'Redlock instances' : 'Redis instance',
    note: cell(`${answering} of ${instances.length} answering${redlock && quorum !== null ? `, quorum ${quorum}` : ''}`, { tone: belowQuorum ? 'bad' : 'muted' }),
    facts: [],
    table: {
      name: 'Instances',
      columns: ['Instance', 'Status', 'Changes seen by', 'Last error'],
      rows: instances.map((instance) => ({
        cells: [
          cell(instance.instance, { mono: true }),
          instance.up === null ? cell('unknown', { badge: 'muted' }) : instance.up ? cell('up', { badge: 'ok' }) : cell('down', { badge: 'bad' }),
          cell(instance.keyspaceNotifications === null ? null : instance.keyspaceNotifications ? 'keyspace notifications (pushed)' : 'polling'),
          cell(instance.error, { tone: instance.error ? 'bad' : 'muted' }),
        ],
        state: instance.up === null ? 'unknown' : instance.up ? 'up' : 'down',
      })),
      empty: 'The source reported no instances.',
    },
  };
}
