// What the compile layer and the adapters may use of the model layer.
export * from "./issue.js";
export * from "./time.js";
export * from "./types.js";
export * from "./decision.js";
export * from "./request.js";
export * from "./cardFormats.js";
export * from "./systemSchema.js";
export { parseSnapshot, parseSnapshotOrThrow, defaultCardFormat, isValidZone } from "./parseSnapshot.js";
export { validateCardFormat, validateLayout } from "./validateCardFormat.js";
export { fromZodIssues, zodMessage } from "./zodIssues.js";
export { decodeWiegand, encodeWiegand, resolveCardFormat } from "./wiegandCodec.js";
export type { DecodedWiegand, WiegandFields } from "./wiegandCodec.js";
