/**
 * Field ids across nights: a column keeps its id, a new one takes its preferred id (or, if the
 * table ever gave that id, the next free one) and a new schema version, a dropped one's id is
 * retired (a column of that name added again gets a new id). The ids conversion writes into the
 * files agree with the table's as columns grow at the end, the trailer included.
 */
import { describe, expect, it } from 'vitest';
import type { ManifestDataset } from '../../src/output/catalog/manifest.js';
import { columnFieldIds, schemaFor, type IcebergSchema } from '../../src/output/iceberg/index.js';
import { idsDisagreeing } from '../../src/output/iceberg/schema.js';

type Columns = ManifestDataset['columns'];
const col = (
  name: string,
  type: Columns[number]['type'],
  role: Columns[number]['role'] = 'field',
): Columns[number] => ({ name, type, role });

describe('Iceberg schema ids', () => {
  it('keeps ids across nights, adds versions for new columns and retires dropped ones', () => {
    const first = schemaFor(
      [col('cik', 'VARCHAR'), col('value', 'DECIMAL(38,0)'), col('tags', 'VARCHAR[]')],
      [],
      -1,
    );
    expect(first.schema).toEqual({
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'cik', required: false, type: 'string' },
        { id: 2, name: 'value', required: false, type: 'decimal(38, 0)' },
        {
          id: 3,
          name: 'tags',
          required: false,
          type: { type: 'list', 'element-id': 20_003, element: 'string', 'element-required': false },
        },
      ],
    });
    const schemas: IcebergSchema[] = [first.schema];
    const same = schemaFor(
      [col('cik', 'VARCHAR'), col('value', 'DECIMAL(38,0)'), col('tags', 'VARCHAR[]')],
      schemas,
      0,
    );
    expect(same).toMatchObject({ added: false, lastColumnId: 20_003 });
    expect(same.schema).toBe(first.schema);

    const grown = schemaFor(
      [col('cik', 'VARCHAR'), col('filed', 'DATE'), col('tags', 'VARCHAR[]')],
      schemas,
      0,
    );
    expect(grown.added).toBe(true);
    expect(grown.schema['schema-id']).toBe(1);
    expect(grown.schema.fields.map((f) => [f.name, f.id])).toEqual([
      ['cik', 1],
      // Its preferred id (2) was value's: retired, so the next free one.
      ['filed', 20_004],
      ['tags', 3],
    ]);
    // Files would carry 2 for it: the commit refuses rather than mislabel the column.
    expect(
      idsDisagreeing(grown.schema, [col('cik', 'VARCHAR'), col('filed', 'DATE'), col('tags', 'VARCHAR[]')]),
    ).toEqual(['filed']);
    schemas.push(grown.schema);
    const back = schemaFor([col('cik', 'VARCHAR'), col('value', 'DECIMAL(38,0)')], schemas, 1);
    expect(back.schema.fields.map((f) => [f.name, f.id])).toEqual([
      ['cik', 1],
      ['value', 20_005],
    ]);
    expect(back.lastColumnId).toBe(20_005);
  });

  it("a data column added before the trailer keeps every id the files carry equal to the table's", () => {
    const night1 = [
      col('cik', 'VARCHAR'),
      col('tags', 'VARCHAR[]'),
      col('_extra', 'JSON', 'extra'),
      col('_snapshot_id', 'VARCHAR', 'lineage'),
    ];
    const first = schemaFor(night1, [], -1);
    expect(idsDisagreeing(first.schema, night1)).toEqual([]);
    // Night 2 sees a new field: a new data column at the end of the data columns, before the trailer.
    const night2 = [...night1.slice(0, 2), col('label', 'VARCHAR'), ...night1.slice(2)];
    const grown = schemaFor(night2, [first.schema], 0);
    expect(grown.added).toBe(true);
    expect(grown.schema.fields.map((f) => [f.name, f.id])).toEqual([
      ['cik', 1],
      ['tags', 2],
      ['label', 3],
      ['_extra', 10_001],
      ['_snapshot_id', 10_002],
    ]);
    expect(columnFieldIds(night2).map((c) => [c.name, c.id, c.elementId])).toEqual(
      grown.schema.fields.map((f) => [
        f.name,
        f.id,
        typeof f.type === 'string' ? undefined : f.type['element-id'],
      ]),
    );
    expect(idsDisagreeing(grown.schema, night2)).toEqual([]);
  });
});
