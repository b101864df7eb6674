/**
 * rsop-engine: compiled physical-access decisions and resultant set of policy.
 *
 * The engine's entry: parse and compile snapshots, decide scans, RSOP and queries, Wiegand frames,
 * 1.0 panels and their migration, and live systems that change through the service's routes. It imports no Node built-in and no CLI or server library; the
 * web-standard HTTP handler is `rsop-engine/http`. Everything here is documented at its declaration
 * with an example.
 *
 * The list is curated: what an embedder calls or names in a type. Helpers the CLI, the service and
 * the tests share (seeded id sources, preflight predicates, migration id derivation, path
 * formatting) are imported from their modules, not from here.
 * @packageDocumentation
 */
export { parseSnapshot, parseSnapshotOrThrow } from "./model/parseSnapshot.js";
export type { ParseSnapshotOptions } from "./model/parseSnapshot.js";
export { QueryError, SnapshotError, formatIssues } from "./model/issue.js";
export { requestIssues } from "./model/request.js";
export { OUTCOME_CODES, REASONS, outcomeOf } from "./model/decision.js";
export { KNOWN_CARD_FORMATS } from "./model/cardFormats.js";
export { decodeWiegand, encodeWiegand, resolveCardFormat } from "./model/wiegandCodec.js";
export { isCardNumber } from "./model/cardNumber.js";
export type { CardNumber } from "./model/cardNumber.js";
export { Engine, createEngine, loadEngine, loadEngineOrThrow } from "./evaluate/engine.js";
export { ReaderHandle } from "./evaluate/reader.js";
export { AccessState } from "./evaluate/accessState.js";
export type { AccessStateJson, AccessStateView } from "./evaluate/accessState.js";
export type { DoorState } from "./evaluate/doorState.js";
export { diffAccess } from "./evaluate/diffAccess.js";
export { weeklyPicture } from "./evaluate/weeklyPicture.js";
export { parsePanel, parsePanelOrThrow } from "./legacy1/parsePanel.js";
export { PanelEngine, loadPanelEngine, loadPanelEngineOrThrow } from "./legacy1/panelEngine.js";
export { migratePanel } from "./legacy1/migration/migratePanel.js";
export { preflightPanel } from "./legacy1/migration/preflightPanel.js";
export { LiveSystem, createLiveSystem } from "./live/index.js";
export { PanelLiveSystem, createPanelLiveSystem } from "./legacy1/index.js";

export type { Issue, IssueCode, Result } from "./model/issue.js";
export type { AccessRequest, CredentialInput, NodeState } from "./model/request.js";
export type {
  AllowedDecision,
  AllowedReason,
  Decision,
  DecisionFields,
  DeniedDecision,
  DeniedReason,
  Outcome,
  Reason,
  Topic,
  UnknownDecision,
  UnknownReason,
} from "./model/decision.js";
export type {
  BitField,
  CardLayout,
  FixedBits,
  KnownCardFormat,
  ParityBitSpec,
  ResolvedLayout,
  ResolvedParity,
} from "./model/cardFormats.js";
export type { DecodedWiegand, WiegandFields } from "./model/wiegandCodec.js";
export type { SystemSnapshotInput } from "./model/systemSchema.js";
export type {
  Area,
  AuthenticationPolicy,
  Calendar,
  CardFormat,
  CloudNode,
  Connection,
  Credential,
  CustomField,
  Device,
  FacilityCodePolicy,
  FloorGroup,
  Group,
  Holder,
  InputType,
  Partition,
  Rule,
  SystemSnapshot,
  Weekday,
} from "./model/types.js";
export type {
  AtOptions,
  RsopOptions,
  RsopResult,
  RsopHolder,
  RsopRule,
  RsopDevice,
  RsopFloorGroup,
  RsopNodeRef,
} from "./evaluate/rsop.js";
export type { WhoResult, AccessEntry } from "./evaluate/who.js";
export type { BatchColumns, BatchOut, ReaderOptions } from "./evaluate/reader.js";
export type { AccessWindowsResult, AccessInterval, PeriodOptions } from "./evaluate/accessWindows.js";
export type { Explanation, TraceRule, TraceStep, TraceStepName } from "./evaluate/explain.js";
export type { AccessChange, AccessDiff, DiffOptions, TimeSpan } from "./evaluate/diffAccess.js";
export type {
  PictureDay,
  PictureOptions,
  PictureRow,
  PictureSubject,
  WeeklyPicture,
} from "./evaluate/weeklyPicture.js";
export type { LoadedPanel } from "./legacy1/parsePanel.js";
export type { PanelSnapshot, PanelSnapshotInput } from "./legacy1/panelSchema.js";
export type { DroppedField, MappedType } from "./legacy1/panelToSystem.js";
export type { PanelDecision, PanelRsopPerson, PanelRsopResult, PanelTopic } from "./legacy1/panelEngine.js";
export type { MappingRecord, MigrateOptions, Migration } from "./legacy1/migration/migratePanel.js";
export type {
  ControllerVersion,
  InvalidDevice,
  Preflight,
  PreflightDevice,
} from "./legacy1/migration/preflightPanel.js";
export type {
  BatchResult,
  IdSource,
  LiveSystemOptions,
  Method,
  Operation,
  OperationResult,
  PreviewResult,
  ReadResult,
  RefusedResult,
  WriteResult,
} from "./live/index.js";
export type {
  PanelBatchResult,
  PanelLiveSystemOptions,
  PanelOperationResult,
  PanelReadResult,
  PanelWriteResult,
} from "./legacy1/index.js";
