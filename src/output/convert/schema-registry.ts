/**
 * The schema registry under `<root>/_schemas/<dataset>.json`: the column list each dataset was
 * last published with, its version, and the unknown fields seen (kept in `_extra`).
 *
 * Fixed schemas (facts, evidence, issuer reference) come from the code. Inferred schemas
 * (series_catalog, dims_catalog) start empty and grow additively: a field seen for the first time
 * becomes a new column at the end with `since` = the new version; existing columns never change
 * type or position. A value that does not fit its column's type later lands in `_extra`.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InputError } from '../../errors.js';
import type { DatasetName } from '../../types.js';
import { Kind } from '../../types.js';
import { writeFileAtomic } from '../storage/index.js';
import { schemaRegistryPath } from '../catalog/index.js';
import {
  baseSchema,
  fieldColumns,
  isColumnType,
  RESERVED_NAMES,
  withTrailer,
  type ColumnDef,
  type ColumnType,
  type DatasetSchema,
} from '../../datasets/index.js';

export interface SchemaRegistryFile {
  dataset: DatasetName;
  schema_version: number;
  inferred: boolean;
  columns: ColumnDef[];
  /** Fields outside the schema seen so far (their values are in `_extra`). */
  extra_fields: string[];
  /** Fields seen only with null values (not columns until a value arrives). */
  null_only_fields: string[];
  history: { version: number; snapshot_id: string; added: string[]; at: string }[];
}

/** The schema a snapshot is published with, and what its rows carry outside of it. */
export interface ResolvedSchema {
  schema: DatasetSchema;
  /** Fields outside the schema with their kinds: read into `_extra`. */
  extraFields: Map<string, number>;
  /** Fields whose observed kinds do not fit their column's type (values that don't cast go to `_extra`). */
  typeConflicts: { field: string; type: ColumnType; kinds: number }[];
  /** Columns added by this snapshot (inferred datasets). */
  added: string[];
}

/** Column type for the kinds a field was seen with; undefined when it was only ever null. */
export function inferType(kinds: number): ColumnType | undefined {
  const k = kinds & ~Kind.NULL;
  if (k === 0) return undefined;
  if (k === Kind.DATE_STRING) return 'DATE';
  if ((k & ~(Kind.STRING | Kind.DATE_STRING)) === 0) return 'VARCHAR';
  if (k === Kind.BOOLEAN) return 'BOOLEAN';
  if (k === Kind.INT) return 'BIGINT';
  if ((k & ~(Kind.INT | Kind.BIGINT)) === 0) return 'DECIMAL(38,0)';
  if ((k & ~(Kind.INT | Kind.FLOAT)) === 0) return 'DOUBLE';
  if (k === Kind.STRING_ARRAY) return 'VARCHAR[]';
  return 'JSON';
}

/** Whether values of these kinds cast to the type without loss (VARCHAR and JSON take anything). */
export function kindsFit(type: ColumnType, kinds: number): boolean {
  const k = kinds & ~Kind.NULL;
  const only = (allowed: number): boolean => (k & ~allowed) === 0;
  switch (type) {
    case 'VARCHAR':
    case 'JSON':
      return true;
    case 'BOOLEAN':
      return only(Kind.BOOLEAN);
    case 'INTEGER':
    case 'BIGINT':
      return only(Kind.INT);
    case 'DOUBLE':
      return only(Kind.INT | Kind.FLOAT);
    case 'DATE':
      return only(Kind.DATE_STRING);
    case 'TIMESTAMPTZ':
      return only(Kind.STRING | Kind.DATE_STRING);
    case 'DECIMAL(38,0)':
      return only(Kind.INT | Kind.BIGINT | Kind.STRING);
    case 'VARCHAR[]':
      return only(Kind.STRING_ARRAY);
  }
}

export async function readSchemaRegistry(
  root: string,
  dataset: DatasetName,
): Promise<SchemaRegistryFile | undefined> {
  const path = schemaRegistryPath(root, dataset);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err: unknown) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
  let j: SchemaRegistryFile;
  try {
    j = JSON.parse(text) as SchemaRegistryFile;
  } catch (err: unknown) {
    throw new InputError(`${path}: not valid JSON (${(err as Error).message})`, { code: 'DATA_INVALID' });
  }
  if (j.dataset !== dataset || !Number.isInteger(j.schema_version) || !Array.isArray(j.columns)) {
    throw new InputError(`${path}: not a schema registry file of ${dataset}`, { code: 'DATA_INVALID' });
  }
  for (const c of j.columns) {
    if (typeof c.name !== 'string' || !isColumnType(c.type)) {
      throw new InputError(`${path}: column ${JSON.stringify(c)} has no valid name/type`, {
        code: 'DATA_INVALID',
      });
    }
  }
  return j;
}

/**
 * Observed fields without a column of `schema`, in the order seen: they are read into `_extra`.
 * An inferred schema leaves out the fields it has only seen as null (`nullOnly`). Pieces
 * converted while staging (src/output/staged-part/parquet/convert-piece.ts) use this rule too, so their statement is publishing's.
 */
export function extraFieldNames(
  schema: DatasetSchema,
  observed: ReadonlyMap<string, number>,
  nullOnly: ReadonlySet<string> = new Set(),
): string[] {
  const columns = new Set(fieldColumns(schema).map((c) => c.name));
  return [...observed.keys()].filter(
    (n) => !RESERVED_NAMES.has(n) && !columns.has(n) && (!schema.inferred || !nullOnly.has(n)),
  );
}

/**
 * Decides the schema of a dataset for one snapshot from the fields its parts carried, and records
 * it in the registry. `observed`: field name → kinds (lineage names excluded by the caller).
 */
export async function resolveSchema(
  root: string,
  dataset: DatasetName,
  observed: ReadonlyMap<string, number>,
  snapshotId: string,
  now: Date,
): Promise<ResolvedSchema> {
  const stored = await readSchemaRegistry(root, dataset);
  const base = baseSchema(dataset);
  let schema: DatasetSchema;
  const added: string[] = [];
  const nullOnly = new Set(stored?.null_only_fields ?? []);
  const history = [...(stored?.history ?? [])];

  if (!base.inferred) {
    schema = base;
    if (stored?.schema_version !== base.version) {
      history.push({ version: base.version, snapshot_id: snapshotId, added: [], at: now.toISOString() });
    }
  } else {
    const dataCols = (stored?.columns ?? []).filter((c) => c.role === 'field').map((c) => ({ ...c }));
    const known = new Set(dataCols.map((c) => c.name));
    let version = stored?.schema_version ?? 0;
    const fresh: ColumnDef[] = [];
    for (const [name, kinds] of observed) {
      if (known.has(name) || RESERVED_NAMES.has(name)) continue;
      const type = inferType(kinds);
      if (type === undefined) {
        nullOnly.add(name);
        continue;
      }
      nullOnly.delete(name);
      fresh.push({ name, type, role: 'field' });
    }
    if (fresh.length > 0) {
      version += 1;
      for (const c of fresh) {
        c.since = version;
        added.push(c.name);
      }
      history.push({ version, snapshot_id: snapshotId, added, at: now.toISOString() });
    }
    schema = withTrailer(dataset, version, true, [...dataCols, ...fresh]);
  }

  const columns = new Map(fieldColumns(schema).map((c) => [c.name, c]));
  const extraFields = new Map(extraFieldNames(schema, observed, nullOnly).map((n) => [n, observed.get(n)!]));
  const typeConflicts: ResolvedSchema['typeConflicts'] = [];
  for (const [name, kinds] of observed) {
    const col = columns.get(name);
    if (col !== undefined && !RESERVED_NAMES.has(name) && !kindsFit(col.type, kinds))
      typeConflicts.push({ field: name, type: col.type, kinds });
  }

  const registry: SchemaRegistryFile = {
    dataset,
    schema_version: schema.version,
    inferred: schema.inferred,
    columns: schema.columns,
    extra_fields: [...new Set([...(stored?.extra_fields ?? []), ...extraFields.keys()])],
    null_only_fields: [...nullOnly],
    history,
  };
  const path = schemaRegistryPath(root, dataset);
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(registry, null, 2)}\n`);
  return { schema, extraFields, typeConflicts, added };
}
