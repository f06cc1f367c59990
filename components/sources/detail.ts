// What a source reports about its backend (the `detail` of GET /api/v1/sources), read
// defensively: it is stored JSON written by whichever collector version observed the source,
// so a field of the wrong type is treated as absent instead of breaking the page.

export type EtcdMember = { id: string; name: string; clientURLs: string[]; isLeader: boolean };
export type EtcdDetail = { leader: string | null; raftTerm: string | null; raftIndex: string | null; version: string | null; members: EtcdMember[] };

export type RedisInstance = { instance: string; up: boolean | null; error: string | null; keyspaceNotifications: boolean | null };
export type RedisDetail = { mode: 'redlock' | 'single'; quorum: number | null; instances: RedisInstance[] };

export type PostgresDetail = { serverVersion: string | null };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'bigint' ? String(value) : null);
const flag = (value: unknown): boolean | null => (typeof value === 'boolean' ? value : null);

export function readEtcdDetail(detail: unknown): EtcdDetail | null {
  if (!isObject(detail) || !('raftTerm' in detail || 'members' in detail || 'leader' in detail)) return null;
  const members = Array.isArray(detail.members) ? detail.members.filter(isObject) : [];
  return {
    leader: text(detail.leader),
    raftTerm: text(detail.raftTerm),
    raftIndex: text(detail.raftIndex),
    version: text(detail.version),
    members: members.map((member) => ({
      id: text(member.id) ?? '',
      name: text(member.name) ?? '',
      clientURLs: Array.isArray(member.clientURLs) ? member.clientURLs.map(text).filter((url): url is string => url !== null) : [],
      isLeader: member.isLeader === true,
    })),
  };
}

export function readRedisDetail(detail: unknown): RedisDetail | null {
  if (!isObject(detail) || !Array.isArray(detail.instances)) return null;
  return {
    mode: detail.mode === 'redlock' ? 'redlock' : 'single',
    quorum: typeof detail.quorum === 'number' ? detail.quorum : null,
    instances: detail.instances.filter(isObject).map((instance) => ({
      instance: text(instance.instance) ?? '?',
      up: flag(instance.up),
      error: text(instance.error),
      keyspaceNotifications: flag(instance.keyspaceNotifications),
    })),
  };
}

export function readPostgresDetail(detail: unknown): PostgresDetail | null {
  if (!isObject(detail) || !('serverVersion' in detail)) return null;
  return { serverVersion: text(detail.serverVersion) };
}

/** Anything else a source reported, as label/value pairs of its plain values (nested values are left out). */
export function plainFacts(detail: unknown): { label: string; value: string }[] {
  if (!isObject(detail)) return [];
  return Object.entries(detail)
    .map(([label, value]) => ({ label, value: typeof value === 'boolean' ? (value ? 'yes' : 'no') : text(value) }))
    .filter((fact): fact is { label: string; value: string } => fact.value !== null);
}
