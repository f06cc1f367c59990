// The drift check's common ground (lib/db/drift.ts): the database objects a schema implies,
// in a form both the schema (drift.ts) and the catalog (drift-catalog.ts) are reduced to, and
// their comparison, each difference one sentence.

/** The database objects a schema implies, in a form both sides can be reduced to. */
export type SchemaShape = {
  enums: Map<string, string[]>;
  tables: Map<string, TableShape>;
};
export type ColumnShape = { type: string; nullable: boolean; default: string | null };
export type TableShape = {
  columns: Map<string, ColumnShape>;
  primaryKey: { name: string; columns: string[] } | null;
  /** index name -> "UNIQUE (a, b)" or "INDEX (a, b)" */
  indexes: Map<string, string>;
  /** constraint name -> "(a) REFERENCES "T"(b) ON DELETE x ON UPDATE y" */
  foreignKeys: Map<string, string>;
};

/** Every difference between two shapes, as sentences; empty when they agree. */
export function compareShapes(expected: SchemaShape, actual: SchemaShape): string[] {
  const out: string[] = [];
  for (const [name, values] of expected.enums) {
    const found = actual.enums.get(name);
    if (!found) out.push(`enum "${name}" is missing from the database`);
    else if (found.join(',') !== values.join(',')) out.push(`enum "${name}" has values (${found.join(', ')}), the schema says (${values.join(', ')})`);
  }
  for (const name of actual.enums.keys()) {
    if (!expected.enums.has(name)) out.push(`enum "${name}" is in the database but not in the schema`);
  }
  for (const [table, want] of expected.tables) {
    const have = actual.tables.get(table);
    if (!have) {
      out.push(`table "${table}" is missing from the database`);
      continue;
    }
    for (const [column, spec] of want.columns) {
      const found = have.columns.get(column);
      if (!found) {
        out.push(`column "${table}"."${column}" is missing from the database`);
        continue;
      }
      if (found.type !== spec.type) out.push(`column "${table}"."${column}" has type ${found.type}, the schema says ${spec.type}`);
      if (found.nullable !== spec.nullable) {
        out.push(`column "${table}"."${column}" is ${found.nullable ? 'nullable' : 'NOT NULL'}, the schema says ${spec.nullable ? 'nullable' : 'NOT NULL'}`);
      }
      if (found.default !== spec.default) {
        out.push(`column "${table}"."${column}" has default ${found.default ?? 'none'}, the schema says ${spec.default ?? 'none'}`);
      }
    }
    for (const column of have.columns.keys()) {
      if (!want.columns.has(column)) out.push(`column "${table}"."${column}" is in the database but not in the schema`);
    }
    const pk = (p: TableShape['primaryKey']) => (p ? `${p.name} (${p.columns.join(', ')})` : 'none');
    if (pk(want.primaryKey) !== pk(have.primaryKey)) out.push(`table "${table}" has primary key ${pk(have.primaryKey)}, the schema says ${pk(want.primaryKey)}`);
    compareMaps(out, `index`, table, want.indexes, have.indexes);
    compareMaps(out, `foreign key`, table, want.foreignKeys, have.foreignKeys);
  }
  for (const table of actual.tables.keys()) {
    if (!expected.tables.has(table)) out.push(`table "${table}" is in the database but not in the schema`);
  }
  return out;
}

function compareMaps(out: string[], what: string, table: string, want: Map<string, string>, have: Map<string, string>) {
  for (const [name, spec] of want) {
    const found = have.get(name);
    if (found === undefined) out.push(`${what} "${name}" on "${table}" is missing from the database (schema: ${spec})`);
    else if (found !== spec) out.push(`${what} "${name}" on "${table}" is ${found}, the schema says ${spec}`);
  }
  for (const [name, found] of have) {
    if (!want.has(name)) out.push(`${what} "${name}" on "${table}" is in the database but not in the schema (${found})`);
  }
}
