/**
 * Single row fields: exact decimals, unit signatures, stable keys and URL paths, and the labels of
 * concepts, axes and members.
 */
export { addDecimal, compareDecimal, decimalFields, equalDecimal, formatDecimal, integerDigits, negateDecimal, parseDecimal, shiftDecimal, subtractDecimal, type Decimal } from './decimal.js';
export { blobUrlOf, cikOfId, evidenceKeyOf, evidenceUrlOf, filingViewerUrlOf, seriesIdOf, seriesIdentity, sha256Hex, viewerUrlOf } from './keys.js';
export { axisLabelFallback, cleanDimensionLabel, conceptLabelFallback, localName, memberLabelFallback, parseLabelLinkbase } from './labels.js';
export { unitInfo, unitLabel, type UnitInfo } from './units.js';
