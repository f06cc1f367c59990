'use client';
// What a source says about its backend, as its kind's descriptor shaped it on the server (the
// source's `panel`: lib/sources/<kind>/panel.ts): etcd's cluster, Redis' instances,
// PostgreSQL's server version, or the plain values of a kind with no shape of its own. One
// renderer for every kind: facts and one table, never raw JSON.
import type { ReactNode } from 'react';
import { Badge } from '@/components/ui/badge';
import { When } from '@/components/when';
import type { SourceRow } from '@/lib/queries/console';
import type { PanelCell, SourcePanel } from '@/lib/domain/schemas';
import styles from './sources.module.css';

function Cell({ cell }: { cell: PanelCell }): ReactNode {
  if (cell.badge) return <Badge tone={cell.badge}>{cell.text}</Badge>;
  return cell.tone === 'bad' ? <span className="bad-text">{cell.text}</span> : cell.tone === 'muted' ? <span className="muted">{cell.text}</span> : cell.text;
}

/** A panel's facts as a definition list: plain under the source's card, or inside its titled panel. */
function Facts({ facts, className, factClassName, monoClassName }: { facts: SourcePanel['facts']; className?: string; factClassName?: string; monoClassName: string }) {
  return (
    <dl className={className}>
      {facts.map((fact) => (
        <div key={fact.label} className={factClassName}>
          <dt>{fact.label}</dt>
          <dd className={fact.value.mono ? monoClassName : undefined}>
            <Cell cell={fact.value} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

export function BackendDetail({ source }: { source: SourceRow }) {
  const { panel } = source;
  if (!panel) return null;
  if (panel.title === null && !panel.table) {
    if (panel.facts.length === 0) return null;
    return <Facts facts={panel.facts} className={styles.facts} factClassName={styles.fact} monoClassName="mono" />;
  }
  const title = panel.title ?? 'Backend';
  return (
    <section className={styles.detail} aria-label={`${title} of ${source.name}`}>
      <h3 className={styles.detailTitle}>
        {title}
        {panel.note ? (
          <>
            {' '}
            <span className={`${styles.detailNote} ${panel.note.tone === 'bad' ? 'bad-text' : 'muted'}`}>{panel.note.text}</span>
          </>
        ) : null}
      </h3>
      {/* The collector keeps the last status it read: while a source is down, this is older news. */}
      {source.status !== 'up' ? (
        <p className={`muted ${styles.asOf}`}>
          As of the last good read{source.lastGoodReadAt ? <> (<When iso={source.lastGoodReadAt} />)</> : null}.
        </p>
      ) : null}
      {panel.facts.length ? <Facts facts={panel.facts} className={styles.clusterFacts} monoClassName="mono tabular" /> : null}
      {panel.table ? (
        panel.table.rows.length === 0 ? (
          <p className="muted">{panel.table.empty}</p>
        ) : (
          <div className="table-scroll">
            <table className={`data ${styles.innerTable}`} aria-label={`${panel.table.name} of ${source.name}`}>
              <thead>
                <tr>
                  {panel.table.columns.map((column) => (
                    <th key={column} scope="col">
                      {column}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {panel.table.rows.map((row, index) => (
                  <tr key={index} className={row.highlight ? styles.leaderRow : undefined} data-testid="backend-row" data-state={row.state}>
                    {row.cells.map((cell, column) => (
                      <td key={column} className={cell.mono ? `mono ${styles.urls}` : undefined}>
                        <Cell cell={cell} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : null}
    </section>
  );
}
