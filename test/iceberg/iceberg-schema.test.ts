/**
 * Field ids across nights: a column keeps its id, a new one takes the next id and a new schema
 * version, a dropped one's id is retired (a column of that name added again gets a new id).
 */
import { describe, expect, it } from 'vitest';
import type { ManifestDataset } from '../../src/output/catalog/manifest.js';
import { schemaFor, type IcebergSchema } from '../../src/output/iceberg/index.js';

type Columns = ManifestDataset['columns'];
const col = (name: string, type: Columns[number]['type']): Columns[number] => ({ name, type, role: 'field' });

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
          type: { type: 'list', 'element-id': 4, element: 'string', 'element-required': false },
        },
      ],
    });
    const schemas: IcebergSchema[] = [first.schema];
    const same = schemaFor(
      [col('cik', 'VARCHAR'), col('value', 'DECIMAL(38,0)'), col('tags', 'VARCHAR[]')],
      schemas,
      0,
    );
    expect(same).toMatchObject({ added: false, lastColumnId: 4 });
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
      ['filed', 5],
      ['tags', 3],
    ]);
    schemas.push(grown.schema);
    const back = schemaFor([col('cik', 'VARCHAR'), col('value', 'DECIMAL(38,0)')], schemas, 1);
    expect(back.schema.fields.map((f) => [f.name, f.id])).toEqual([
      ['cik', 1],
      ['value', 6],
    ]);
    expect(back.lastColumnId).toBe(6);
  });
});
