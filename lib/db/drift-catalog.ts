// The drift check's reading of the database (lib/db/drift.ts): the tables, columns, enums,
// keys, indexes and foreign keys the catalog says, normalised to the form the schema's side
// takes (drift-shape.ts).
import type { SqlSession } from './sql';
import type { SchemaShape, TableShape } from './drift-shape';

/** The same shape as expectedShape's (lib/db/drift.ts), read from the database's catalog (schema `public`, minus Prisma's bookkeeping table; a partitioned table counts once, its partitions not at all). */
export async function actualShape(sql: SqlSession, schema = 'public'): Promise<SchemaShape> {
  const enumRows = await sql.query<{ name: string; value: string }>(
    `SELECT t.typname AS name, e.enumlabel AS value
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = $1 ORDER BY t.typname, e.enumsortorder`,
    [schema],
  );
  const enums = new Map<string, string[]>();
  for (const row of enumRows) enums.set(row.name, [...(enums.get(row.name) ?? []), row.value]);

  const columnRows = await sql.query<{ table: string; column: string; type: string; nullable: boolean; default: string | null; enum: boolean }>(
    `SELECT c.relname AS "table", a.attname AS "column",
            format_type(a.atttypid, a.atttypmod) AS "type",
            NOT a.attnotnull AS "nullable",
            pg_get_expr(d.adbin, d.adrelid) AS "default",
            t.typtype = 'e' AS "enum"
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       JOIN pg_type t ON t.oid = a.atttypid
       LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> '_prisma_migrations'
      ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const tables = new Map<string, TableShape>();
  for (const row of columnRows) {
    let shape = tables.get(row.table);
    if (!shape) {
      shape = { columns: new Map(), primaryKey: null, indexes: new Map(), foreignKeys: new Map() };
      tables.set(row.table, shape);
    }
    shape.columns.set(row.column, {
      type: row.enum ? `"${row.type.replace(/^"|"$/g, '')}"` : row.type,
      nullable: row.nullable,
      default: normaliseDefault(row.default),
    });
  }

  const indexRows = await sql.query<{ table: string; name: string; primary: boolean; unique: boolean; columns: string[] }>(
    `SELECT c.relname AS "table", i.relname AS "name", x.indisprimary AS "primary", x.indisunique AS "unique",
            ARRAY(SELECT a.attname FROM unnest(x.indkey) WITH ORDINALITY k(attnum, ord)
                    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS "columns"
       FROM pg_index x
       JOIN pg_class c ON c.oid = x.indrelid
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname <> '_prisma_migrations'`,
    [schema],
  );
  for (const row of indexRows) {
    const shape = tables.get(row.table);
    if (!shape) continue;
    if (row.primary) shape.primaryKey = { name: row.name, columns: row.columns };
    else shape.indexes.set(row.name, `${row.unique ? 'UNIQUE' : 'INDEX'} (${row.columns.join(', ')})`);
  }

  const fkRows = await sql.query<{ table: string; name: string; definition: string }>(
    `SELECT c.relname AS "table", k.conname AS "name", pg_get_constraintdef(k.oid) AS "definition"
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND k.contype = 'f'`,
    [schema],
  );
  for (const row of fkRows) {
    tables.get(row.table)?.foreignKeys.set(row.name, normaliseForeignKey(row.definition));
  }
  return { enums, tables };
}

function normaliseDefault(text: string | null): string | null {
  if (text === null) return null;
  if (/^nextval\(/.test(text)) return 'nextval()';
  if (/^(CURRENT_TIMESTAMP|now\(\))$/i.test(text)) return 'CURRENT_TIMESTAMP';
  // '[]'::jsonb -> '[]' ; 'unknown'::"SourceStatus" stays (enum defaults carry the type)
  const literal = /^('(?:[^']|'')*')::(jsonb|text|character varying|bigint|integer)$/.exec(text);
  if (literal) return literal[1]!;
  return text;
}

// pg_get_constraintdef: FOREIGN KEY ("a") REFERENCES "T"(b) ON UPDATE CASCADE ON DELETE CASCADE
function normaliseForeignKey(definition: string): string {
  const match = /^FOREIGN KEY \((.+?)\) REFERENCES (.+?)\((.+?)\)(.*)$/.exec(definition);
  if (!match) return definition;
  const [, from, target, to, rest] = match as unknown as [string, string, string, string, string];
  const unquote = (list: string) => list.split(',').map((c) => c.trim().replace(/^"|"$/g, '')).join(', ');
  const action = (kind: string) => new RegExp(`ON ${kind} (SET NULL|SET DEFAULT|CASCADE|RESTRICT|NO ACTION)`).exec(rest)?.[1] ?? 'NO ACTION';
  const quotedTarget = target.startsWith('"') ? target : `"${target}"`;
  return `(${unquote(from)}) REFERENCES ${quotedTarget}(${unquote(to)}) ON DELETE ${action('DELETE')} ON UPDATE ${action('UPDATE')}`;
}
