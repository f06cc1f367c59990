// What the sources page shows of a backend's own status (GET /api/v1/sources, a source's
// `panel`): facts and one table, shaped on the server by the backend's descriptor
// (lib/sources/<kind>/panel.ts) from the status its source reported, and rendered by one
// component for every kind (components/sources/backend-detail.tsx). A new backend shapes its
// panel in its own folder; the browser has nothing to learn.
import { z } from 'zod';

const text = z.string();

/** One value: text (monospace for ids, URLs and numbers; red or muted), or a badge. */
export const panelCellSchema = z.object({
  text,
  badge: z.enum(['ok', 'bad', 'muted']).optional(),
  tone: z.enum(['bad', 'muted']).optional(),
  mono: z.boolean().optional(),
});

export const panelFactSchema = z.object({ label: text, value: panelCellSchema });

export const panelRowSchema = z.object({
  cells: z.array(panelCellSchema),
  /** Shown stronger (etcd's leader member). */
  highlight: z.boolean().optional(),
  /** What the row's state is in a word (up, down, leader...), for tests and scripts reading the page. */
  state: text.optional(),
});

export const sourcePanelSchema = z.object({
  /** Its heading ("etcd cluster", "Redlock instances"); null: the facts alone. */
  title: text.nullable(),
  /** Beside the heading: "2 of 3 answering, quorum 2". */
  note: panelCellSchema.nullable(),
  facts: z.array(panelFactSchema),
  table: z
    .object({
      /** What its rows are ("Members", "Instances"): with the source's name, the table's label. */
      name: text,
      columns: z.array(text),
      rows: z.array(panelRowSchema),
      /** Said instead of an empty table. */
      empty: text,
    })
    .nullable(),
});

export type PanelCell = z.infer<typeof panelCellSchema>;
export type PanelFact = z.infer<typeof panelFactSchema>;
export type SourcePanel = z.infer<typeof sourcePanelSchema>;
