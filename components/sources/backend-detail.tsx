'use client';
// What each kind of source says about its backend: etcd's cluster (leader member, Raft term
// and index, members), Redis' instances (each Redlock instance and whether it answers),
// PostgreSQL's server version. Shown as facts and tables, never as raw JSON.
import type { ReactNode } from 'react';
import { Badge } from '@/components/ui/badge';
import { When } from '@/components/when';
import type { SourceRow } from '@/lib/queries/console';
import { plainFacts, readEtcdDetail, readPostgresDetail, readRedisDetail, type EtcdDetail, type RedisDetail } from './detail';
import styles from './sources.module.css';

/**
 * The one place for backend-specific UI: a kind whose status has a shape of its own gets a view
 * here, keyed by its kind; any other kind (a new backend) is shown as plain facts, and so is a
 * status a view cannot read.
 */
const DETAIL_VIEWS: Readonly<Record<string, (source: SourceRow, asOf: ReactNode) => ReactNode>> = {
  etcd(source, asOf) {
    const etcd = readEtcdDetail(source.detail);
    return etcd ? <EtcdCluster name={source.name} etcd={etcd} asOf={asOf} /> : null;
  },
  redis(source, asOf) {
    const redis = readRedisDetail(source.detail);
    return redis ? <RedisInstances name={source.name} redis={redis} asOf={asOf} /> : null;
  },
  postgres(source) {
    const postgres = readPostgresDetail(source.detail);
    if (!postgres) return null;
    return (
      <dl className={styles.facts}>
        <div className={styles.fact}>
          <dt>Server version</dt>
          <dd>{postgres.serverVersion ?? '—'}</dd>
        </div>
      </dl>
    );
  },
};

export function BackendDetail({ source }: { source: SourceRow }) {
  if (!source.detail) return null;
  // The collector keeps the last status it read: while a source is down, this is older news.
  const asOf =
    source.status !== 'up' ? (
      <p className={`muted ${styles.asOf}`}>
        As of the last good read{source.lastGoodReadAt ? <> (<When iso={source.lastGoodReadAt} />)</> : null}.
      </p>
    ) : null;
  const shown = DETAIL_VIEWS[source.backend]?.(source, asOf);
  if (shown) return shown;
  const facts = plainFacts(source.detail);
  if (facts.length === 0) return null;
  return (
    <dl className={styles.facts}>
      {facts.map((fact) => (
        <div key={fact.label} className={styles.fact}>
          <dt>{fact.label}</dt>
          <dd>{fact.value}</dd>
        </div>
      ))}
    </dl>
  );
}

function EtcdCluster({ name, etcd, asOf }: { name: string; etcd: EtcdDetail; asOf: ReactNode }) {
  const leaderMember = etcd.members.find((member) => member.isLeader);
  // etcd reports leader 0 while the cluster has none (an election in progress, or no quorum).
  const noLeader = !leaderMember && (etcd.leader === null || etcd.leader === '0' || etcd.leader === '');
  return (
    <section className={styles.detail} aria-label={`etcd cluster of ${name}`}>
      <h3 className={styles.detailTitle}>etcd cluster</h3>
      {asOf}
      <dl className={styles.clusterFacts}>
        <div>
          <dt>Leader member</dt>
          <dd className="mono" data-testid="etcd-leader">
            {noLeader ? <span className="bad-text">none (no leader)</span> : (leaderMember?.name || etcd.leader || '—')}
          </dd>
        </div>
        <div>
          <dt>Raft term</dt>
          <dd className="mono tabular" data-testid="etcd-raft-term">
            {etcd.raftTerm ?? '—'}
          </dd>
        </div>
        <div>
          <dt>Raft index</dt>
          <dd className="mono tabular" data-testid="etcd-raft-index">
            {etcd.raftIndex ?? '—'}
          </dd>
        </div>
        {etcd.version ? (
          <div>
            <dt>Version</dt>
            <dd className="mono">{etcd.version}</dd>
          </div>
        ) : null}
      </dl>
      {etcd.members.length === 0 ? (
        <p className="muted">The cluster reported no members.</p>
      ) : (
        <div className="table-scroll">
          <table className={`data ${styles.innerTable}`} aria-label={`Members of ${name}`}>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">ID</th>
                <th scope="col">Client URLs</th>
                <th scope="col">Role</th>
              </tr>
            </thead>
            <tbody>
              {etcd.members.map((member) => (
                <tr key={member.id || member.name} className={member.isLeader ? styles.leaderRow : undefined} data-testid="etcd-member" data-leader={member.isLeader}>
                  <td className="mono">{member.name || <span className="muted">(not started)</span>}</td>
                  <td className="mono">{member.id}</td>
                  <td className={`mono ${styles.urls}`}>{member.clientURLs.length ? member.clientURLs.join(', ') : '—'}</td>
                  <td>{member.isLeader ? <Badge tone="ok">leader</Badge> : <span className="muted">follower</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function RedisInstances({ name, redis, asOf }: { name: string; redis: RedisDetail; asOf: ReactNode }) {
  const answering = redis.instances.filter((instance) => instance.up === true).length;
  const total = redis.instances.length;
  const belowQuorum = redis.mode === 'redlock' && redis.quorum !== null && answering < redis.quorum;
  return (
    <section className={styles.detail} aria-label={`Redis instances of ${name}`}>
      <h3 className={styles.detailTitle}>
        {redis.mode === 'redlock' ? 'Redlock instances' : 'Redis instance'}{' '}
        <span className={`${styles.detailNote} ${belowQuorum ? 'bad-text' : 'muted'}`}>
          {answering} of {total} answering
          {redis.mode === 'redlock' && redis.quorum !== null ? `, quorum ${redis.quorum}` : ''}
        </span>
      </h3>
      {asOf}
      <div className="table-scroll">
        <table className={`data ${styles.innerTable}`} aria-label={`Instances of ${name}`}>
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">Status</th>
              <th scope="col">Changes seen by</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {redis.instances.map((instance, index) => (
              <tr key={`${index}:${instance.instance}`} data-testid="redis-instance" data-status={instance.up === null ? 'unknown' : instance.up ? 'up' : 'down'}>
                <td className="mono">{instance.instance}</td>
                <td>{instance.up === null ? <Badge tone="muted">unknown</Badge> : instance.up ? <Badge tone="ok">up</Badge> : <Badge tone="bad">down</Badge>}</td>
                <td>
                  {instance.keyspaceNotifications === null ? '—' : instance.keyspaceNotifications ? 'keyspace notifications (pushed)' : 'polling'}
                </td>
                <td className={instance.error ? 'bad-text' : 'muted'}>{instance.error ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
