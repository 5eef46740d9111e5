/**
 * How a process of the exporter runs, apart from what it does: V8 heap tuning for a process that
 * runs every role (the young generation's cap). Knows nothing of the pipeline, the output or the client.
 */
export {
  capYoungGeneration,
  youngGenerationSetAtStart,
  YOUNG_GENERATION_CAP_BYTES,
  type CapYoungGenerationOptions,
  type HeapControls,
  type YoungGenerationCap,
} from './young-generation.js';
