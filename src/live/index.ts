// The live layer: a system that changes through API routes, above evaluate and below the adapters.
export { LiveSystem, createLiveSystem } from "./liveSystem.js";
export type { BatchResult, LiveSystemOptions, PreviewResult } from "./liveSystem.js";
export type { LiveTarget } from "./liveTarget.js";
export { applySnapshotPatches } from "./transition.js";
export { randomIds, seededIds } from "./ids.js";
export type { IdSource } from "./ids.js";
export type { Method, Operation, OperationResult, ReadResult, RefusedResult, WriteResult } from "./operation.js";
