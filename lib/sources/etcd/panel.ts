// etcd's panel on the sources page: the cluster as the source last read it (observe.ts reports
// { leader, raftTerm, raftIndex, version, members }): the leader member, Raft term and index,
// and each member with its client URLs.
import type { SourcePanel } from '../../domain/schemas/source-panel';
import { cell, isObject, textOf } from '../status-panel';

export function etcdPanel(detail: unknown): SourcePanel | null {
  if (!isObject(detail) || !('raftTerm' in detail || 'members' in detail || 'leader' in detail)) return null;
  const members = (Array.isArray(detail.members) ? detail.members.filter(isObject) : []).map((member) => ({
    id: textOf(member.id) ?? '',
    name: textOf(member.name) ?? '',
    clientURLs: Array.isArray(member.clientURLs) ? member.clientURLs.map(textOf).filter((url): url is string => url !== null) : [],
    isLeader: member.isLeader === true,
  }));
  const leader = textOf(detail.leader);
  const leaderMember = members.find((member) => member.isLeader);
  // etcd reports leader 0 while the cluster has none (an election in progress, or no quorum).
  const noLeader = !leaderMember && (leader === null || leader === '0' || leader === '');
  const version = textOf(detail.version);
  return {
    title: 'etcd cluster',
    note: null,
    facts: [
      { label: 'Leader member', value: noLeader ? cell('none (no leader)', { tone: 'bad' }) : cell(leaderMember?.name || leader, { mono: true }) },
      { label: 'Raft term', value: cell(textOf(detail.raftTerm), { mono: true }) },
      { label: 'Raft index', value: cell(textOf(detail.raftIndex), { mono: true }) },
      ...(version ? [{ label: 'Version', value: cell(version, { mono: true }) }] : []),
    ],
    table: {
      name: 'Members',
      columns: ['Member', 'ID', 'Client URLs', 'Role'],
      rows: members.map((member) => ({
        cells: [
          member.name ? cell(member.name, { mono: true }) : cell('(not started)', { tone: 'muted' }),
          cell(member.id, { mono: true }),
          cell(member.clientURLs.length ? member.clientURLs.join(', ') : null, { mono: true }),
          member.isLeader ? cell('leader', { badge: 'ok' }) : cell('follower', { tone: 'muted' }),
        ],
        highlight: member.isLeader,
        state: member.isLeader ? 'leader' : 'follower',
      })),
      empty: 'The cluster reported no members.',
    },
  };
}
