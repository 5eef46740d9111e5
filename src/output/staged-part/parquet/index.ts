/**
 * A staged part's rows as Parquet (loads DuckDB): a piece converted while the part is staged
 * (convertPiece, the convert-segment job), and a dataset's staged parts converted into its output
 * files at publish (convertStagedParts), which finds the pieces holding each part's rows.
 */
export { convertPiece, type PieceSettings } from './convert-piece.js';
export {
  convertStagedParts,
  type StagedPartsConversion,
  type StagedPartsConverted,
} from './convert-parts.js';
