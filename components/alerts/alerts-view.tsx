// The alerts page (app/(console)/alerts/page.tsx): counters, what fires now, the history, the
// rules and the silences for every reader; the endpoints and every control for admins only.
import type { ReactNode } from 'react';
import type { AlertsPageData } from '@/lib/queries/alerts';
import { EmptyState } from '../ui/empty-state';
import styles from './alerts.module.css';
import { AutoRefresh } from './auto-refresh';
import { EndpointsPanel } from './endpoints-panel';
import { FiringList } from './firing-list';
import { HistoryTable } from './history-table';
import { RulesPanel } from './rules-panel';
import { SilencesPanel } from './silences-panel';

export const REFRESH_MS = 20_000;

function Section({ id, title, note, children }: { id: string; title: string; note?: ReactNode; children: ReactNode }) {
  return (
    <section className={styles.section} aria-labelledby={`${id}-title`} id={id}>
      <div className={styles.sectionHead}>
        <h2 className={styles.sectionTitle} id={`${id}-title`}>
          {title}
        </h2>
        {note ? <p className={styles.sectionNote}>{note}</p> : null}
      </div>
      {children}
    </section>
  );
}

function Counter({ label, value, tone, note, href }: { label: string; value: number; tone?: 'bad' | 'warn' | 'ok'; note?: string; href: string }) {
  return (
    <div className={`counter${tone ? ` ${tone}` : ''}`} data-testid={`counter-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>
      <a className="counter-link" href={href}>
        <span className="value">
          {value.toLocaleString('en')}
          {note ? <span className="note"> {note}</span> : null}
        </span>
        <span className="label">{label}</span>
      </a>
    </div>
  );
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

export function AlertsView({ data, manage, cursor, formats }: { data: AlertsPageData; manage: boolean; cursor: string | undefined; formats: readonly string[] }) {
  const critical = data.firing.filter((alert) => alert.severity === 'critical').length;
  const inForce = data.silences.filter((silence) => silence.state === 'in force').length;
  const dead = data.endpoints?.reduce((sum, endpoint) => sum + endpoint.deliveries.dead, 0) ?? 0;
  return (
    <>
      <AutoRefresh everyMs={REFRESH_MS} />
      <section className={`counters${data.endpoints ? ` ${styles.four}` : ''}`} aria-label="Counters">
        <Counter label="Firing" value={data.firing.length} tone={critical > 0 ? 'bad' : data.firing.length > 0 ? 'warn' : 'ok'} note={critical > 0 ? `${critical} critical` : undefined} href="#firing" />
        <Counter label="Rules on" value={data.rulesOn} note={`of ${data.rules.length}`} href="#rules" />
        <Counter label="Silences" value={inForce} tone={inForce > 0 ? 'warn' : undefined} note={inForce > 0 ? 'in force' : undefined} href="#silences" />
        {data.endpoints ? <Counter label="Dead deliveries" value={dead} tone={dead > 0 ? 'bad' : undefined} href="#endpoints" /> : null}
      </section>

      <Section id="firing" title="Firing now" note={data.firing.length > 0 ? 'The most severe first, then the newest.' : undefined}>
        {data.firing.length === 0 ? (
          <EmptyState title="Nothing is firing">
            <p>
              {data.rulesOn === 0
                ? 'No rule is on, so nothing can fire: switch one on under Rules.'
                : `${plural(data.rulesOn, 'rule is', 'rules are')} on and watching${data.rules.length > data.rulesOn ? ` (${data.rules.length - data.rulesOn} off)` : ''}.`}
            </p>
          </EmptyState>
        ) : (
          <FiringList firing={data.firing} capped={data.firingCapped} deliveries={data.deliveries} />
        )}
      </Section>

      <Section id="history" title="History" note="Resolved alerts, newest first.">
        {data.history.length === 0 ? (
          <p className="muted">{cursor ? 'No older alerts.' : 'Nothing has resolved yet.'}</p>
        ) : (
          <HistoryTable history={data.history} older={data.olderCursor ? `?cursor=${data.olderCursor}#history` : null} newest={cursor ? '?#history' : null} deliveries={data.deliveries} />
        )}
      </Section>

      <Section id="rules" title="Rules" note={`${plural(data.rulesOn, 'rule', 'rules')} on, ${plural(data.rules.length - data.rulesOn, 'off or unreadable', 'off or unreadable')}.`}>
        <RulesPanel rules={data.rules} manage={manage} />
      </Section>

      <Section id="silences" title="Silences" note="While one is in force, the alerts it covers are recorded here but not delivered.">
        <SilencesPanel silences={data.silences} manage={manage} />
      </Section>

      {data.endpoints ? (
        <Section id="endpoints" title="Endpoints" note="Where alerts are sent, signed (Standard Webhooks). Admins only.">
          <EndpointsPanel endpoints={data.endpoints} formats={formats} />
        </Section>
      ) : null}
    </>
  );
}
