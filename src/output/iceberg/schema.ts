/**
 * The Iceberg schema of a dataset, from the columns a snapshot's manifest lists. Field ids are the
 * table's, kept across nights: a column keeps the id it first got (a dropped one keeps it retired,
 * so it never means another column), a new one makes a new schema version.
 *
 * A new column's id is known from the column list alone (`preferredIds`), so conversion writes it
 * into the Parquet footers before any table exists: data columns number from 1 in order (they only
 * grow at the end: the schema registry's rule for inferred datasets, CONTRIBUTING's for fixed ones),
 * the trailer (`_extra`, lineage) from TRAILER_FIRST_ID whatever the data columns before it, and a
 * list's element at ELEMENT_ID_OFFSET past its column's id.
 */
import type { ColumnType } from '../../datasets/index.js';
import type { ManifestDataset } from '../catalog/index.js';

export type IcebergType =
  string | { type: 'list'; 'element-id': number; element: string; 'element-required': boolean };

export interface IcebergField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
}

export interface IcebergSchema {
  type: 'struct';
  'schema-id': number;
  fields: IcebergField[];
}

/** One Iceberg type per column type; JSON is a string (Iceberg has no JSON type). */
const PRIMITIVE: Record<Exclude<ColumnType, 'VARCHAR[]'>, string> = {
  VARCHAR: 'string',
  BOOLEAN: 'boolean',
  INTEGER: 'int',
  BIGINT: 'long',
  DOUBLE: 'double',
  DATE: 'date',
  TIMESTAMPTZ: 'timestamptz',
  'DECIMAL(38,0)': 'decimal(38, 0)',
  JSON: 'string',
};

/** The trailer's first id: past any dataset's data columns, so adding one never moves the trailer's ids. */
export const TRAILER_FIRST_ID = 10_001;
/** A list's element id is its column's id plus this. */
export const ELEMENT_ID_OFFSET = 20_000;

/** The id each column (and `<name>.element` of a list) takes when its name is new to the table. */
export function preferredIds(columns: readonly ManifestDataset['columns'][number][]): Map<string, number> {
  const ids = new Map<string, number>();
  let data = 0;
  let trailer = 0;
  for (const c of columns) {
    const trailing = c.role === 'extra' || c.role === 'lineage';
    const id = trailing ? TRAILER_FIRST_ID + trailer++ : ++data;
    ids.set(c.name, id);
    if (c.type === 'VARCHAR[]') ids.set(`${c.name}.element`, id + ELEMENT_ID_OFFSET);
  }
  return ids;
}

/** Every name → id the table ever gave (element ids under `<name>.element`), and the highest id. */
export function knownIds(schemas: readonly IcebergSchema[]): { ids: Map<string, number>; last: number } {
  const ids = new Map<string, number>();
  let last = 0;
  for (const s of schemas)
    for (const f of s.fields) {
      ids.set(f.name, f.id);
      last = Math.max(last, f.id);
      if (typeof f.type !== 'string') {
        ids.set(`${f.name}.element`, f.type['element-id']);
        last = Math.max(last, f.type['element-id']);
      }
    }
  return { ids, last };
}

/**
 * The schema of `columns` with the table's ids: the current schema itself when nothing changed,
 * else a new version (`schema-id` one past the highest) with new ids for new columns. Names keep
 * the ids of the current schema only: a column dropped earlier and added again is a new column.
 */
export function schemaFor(
  columns: readonly ManifestDataset['columns'][number][],
  schemas: readonly IcebergSchema[],
  currentSchemaId: number,
): { schema: IcebergSchema; lastColumnId: number; added: boolean } {
  const { last } = knownIds(schemas);
  const { ids } = knownIds(schemas.filter((s) => s['schema-id'] === currentSchemaId));
  const used = new Set(schemas.flatMap((s) => [...knownIds([s]).ids.values()]));
  const preferred = preferredIds(columns);
  let next = Math.max(last, ...preferred.values());
  // A new name takes its preferred id unless the table ever gave that id (retired ids stay retired).
  const idOf = (name: string): number => {
    const id = ids.get(name) ?? preferred.get(name);
    return id !== undefined && (ids.has(name) || !used.has(id)) ? id : ++next;
  };
  const fields = columns.map((c): IcebergField => {
    const id = idOf(c.name);
    const type: IcebergType =
      c.type === 'VARCHAR[]'
        ? {
            type: 'list',
            'element-id': idOf(`${c.name}.element`),
            element: 'string',
            'element-required': false,
          }
        : PRIMITIVE[c.type];
    return { id, name: c.name, required: false, type };
  });
  const lastColumnId = Math.max(last, ...fields.flatMap(fieldIds));
  const same = schemas.find((s) => JSON.stringify(s.fields) === JSON.stringify(fields));
  if (same !== undefined) return { schema: same, lastColumnId, added: false };
  const schemaId = schemas.reduce((m, s) => Math.max(m, s['schema-id']), -1) + 1;
  return { schema: { type: 'struct', 'schema-id': schemaId, fields }, lastColumnId, added: true };
}

const fieldIds = (f: IcebergField): number[] =>
  typeof f.type === 'string' ? [f.id] : [f.id, f.type['element-id']];

/**
 * The columns whose ids in `schema` are not the ids conversion writes into the files
 * (`columnFieldIds`): empty unless a dataset's data columns changed other than at their end.
 */
export function idsDisagreeing(
  schema: IcebergSchema,
  columns: readonly ManifestDataset['columns'][number][],
): string[] {
  const files = new Map(columnFieldIds(columns).map((c) => [c.name, c]));
  return schema.fields
    .filter((f) => {
      const c = files.get(f.name);
      return (
        c === undefined ||
        c.id !== f.id ||
        (typeof f.type !== 'string' && c.elementId !== f.type['element-id'])
      );
    })
    .map((f) => f.name);
}

/** A column's field id in a Parquet file, with its list element's when it is a list. */
export interface ColumnFieldId {
  name: string;
  id: number;
  elementId?: number;
}

/**
 * The field ids conversion writes into the Parquet footers of `columns`: the ids a new table gives
 * them (`preferredIds`), which stay the table's while its data columns only grow at the end; a
 * commit refuses a table whose ids disagree with them (`idsDisagreeing`) rather than mislabel columns.
 */
export function columnFieldIds(columns: readonly ManifestDataset['columns'][number][]): ColumnFieldId[] {
  return schemaFor(columns, [], -1).schema.fields.map((f) => ({
    name: f.name,
    id: f.id,
    ...(typeof f.type !== 'string' ? { elementId: f.type['element-id'] } : {}),
  }));
}

/**
 * `schema.name-mapping.default`: every id with its name, so a Parquet file written without field
 * ids reads by name (DuckDB writes a list's element as `element`).
 */
export function nameMapping(schema: IcebergSchema): string {
  const { ids } = knownIds([schema]);
  const mapping = [...ids]
    .filter(([name]) => !name.endsWith('.element'))
    .map(([name, id]) => {
      const element = ids.get(`${name}.element`);
      return {
        'field-id': id,
        names: [name],
        ...(element !== undefined ? { fields: [{ 'field-id': element, names: ['element'] }] } : {}),
      };
    });
  return JSON.stringify(mapping);
}
