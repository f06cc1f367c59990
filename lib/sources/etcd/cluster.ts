// The cluster's own status: its Raft leader (by member name), term and index, its version and
// its members, from two small calls (maintenance status and the member list).
import type { Etcd3 } from 'etcd3';
import { redactUrlPassword } from '../../redact';
import type { SourceStatusDetail } from '../types';

export async function clusterStatus(client: Etcd3): Promise<SourceStatusDetail> {
  const [status, members] = await Promise.all([client.maintenance.status(), client.cluster.memberList({})]);
  const leaderId = String(status.leader);
  return {
    leader: members.members.find((m) => String(m.ID) === leaderId)?.name ?? BigInt(leaderId).toString(16),
    raftTerm: String(status.raftTerm),
    raftIndex: String(status.raftIndex),
    version: status.version,
    members: members.members.map((m) => ({
      id: BigInt(String(m.ID)).toString(16),
      name: m.name,
      clientURLs: m.clientURLs.map((u) => redactUrlPassword(u)),
      isLeader: String(m.ID) === leaderId,
    })),
  };
}
