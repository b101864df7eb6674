// Everything 1.0 in one place: the panel model, its engine, its live system and its migration to 2.0. Above live
// (the panel live system is built from live's parts) and below events · reports, service and adapters.
export { parsePanel, parsePanelOrThrow, panelKey, panelPath } from "./parsePanel.js";
export type { LoadedPanel } from "./parsePanel.js";
export { panelToSystem } from "./panelToSystem.js";
export type { DroppedField, IdMapper, MappedType, PanelConversion } from "./panelToSystem.js";
export { panelSnapshotSchema, METADATA_LIMIT_BYTES } from "./panelSchema.js";
export type { PanelSnapshot, PanelSnapshotInput } from "./panelSchema.js";
export { PanelEngine, loadPanelEngine, loadPanelEngineOrThrow } from "./panelEngine.js";
export type { PanelDecision, PanelRsopPerson, PanelRsopResult, PanelTopic } from "./panelEngine.js";
export { PanelLiveSystem, createPanelLiveSystem } from "./live/panelLiveSystem.js";
export type {
  PanelBatchResult,
  PanelLiveSystemOptions,
  PanelOperationResult,
  PanelReadResult,
  PanelWriteResult,
} from "./live/panelLiveSystem.js";
