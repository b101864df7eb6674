// What the compile layer and the adapters may use of the model layer.
export * from "./issue.js";
export { die } from "./errors.js";
export type { InvariantCode } from "./errors.js";
export * from "./time.js";
export * from "./types.js";
export * from "./decision.js";
export * from "./request.js";
export * from "./cardNumber.js";
export * from "./cardFormats.js";
export * from "./systemSchema.js";
export {
  customFieldSchema,
  panelCustomFieldSchema,
  customFieldValueIssues,
  definitionConflicts,
  CUSTOM_FIELD_TYPES,
  CUSTOM_FIELD_CHILD_TYPES,
  CUSTOM_FIELD_VISIBILITIES,
  CUSTOM_FIELD_REGEX_MAX,
  CUSTOM_FIELD_DECIMALS_MAX,
} from "./customFields.js";
export type { FieldDefinition, ValueOwner } from "./customFields.js";
export {
  parseSnapshot,
  parseSnapshotOrThrow,
  defaultCardFormat,
  isValidZone,
  normalizeHolder,
  normalizeCredential,
} from "./parseSnapshot.js";
export { validateCardFormat, validateLayout } from "./validateCardFormat.js";
export { fromZodIssues, zodMessage } from "./zodIssues.js";
export { decodeWiegand, encodeWiegand, resolveCardFormat } from "./wiegandCodec.js";
export type { DecodedWiegand, WiegandFields } from "./wiegandCodec.js";
