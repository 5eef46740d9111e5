/** The dataset registry and the column vocabulary of the output schemas. */
export * from './columns.js';
export * from './registry.js';
export { FACT_COLUMNS } from './fact.js';
