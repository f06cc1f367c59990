// The alerts page's tables: components/ui/data-table.tsx whose rows become cards of
// "name: value" lines on a phone (alerts.module.css .cards), so nothing scrolls sideways;
// wider, a table that scrolls inside its frame if it must.
import { DataTable, type DataTableProps } from '../ui/data-table';
import styles from './alerts.module.css';

export function CardTable<Row>(props: Omit<DataTableProps<Row>, 'cellClassName'>) {
  return <DataTable {...props} className={`${styles.cards}${props.className ? ` ${props.className}` : ''}`} cellClassName={styles.cell} />;
}
