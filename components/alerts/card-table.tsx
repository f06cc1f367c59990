// The alerts page's tables: components/ui/data-table.tsx whose rows become cards of
// "name: value" lines on a phone (alerts.module.css .cards), so nothing scrolls sideways;
// wider, a table that scrolls inside its frame if it must.
import { DataTable, type Column } from '../ui/data-table';
import styles from './alerts.module.css';

export type CardColumn<Row> = Column<Row>;

export function CardTable<Row>(props: {
  label: string;
  columns: CardColumn<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  rowProps?: (row: Row) => Record<`data-${string}`, string>;
  className?: string;
}) {
  return <DataTable {...props} className={`${styles.cards}${props.className ? ` ${props.className}` : ''}`} cellClassName={styles.cell} />;
}
