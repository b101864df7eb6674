// What the adapters may use of the evaluate layer.
export { Engine, createEngine, loadEngine, loadEngineOrThrow } from "./engine.js";
export { decide, newDecision } from "./decide.js";
export { AccessState } from "./accessState.js";
export type { AccessStateJson, AccessStateView } from "./accessState.js";
export type { DoorState } from "./doorState.js";
export { ReaderHandle } from "./reader.js";
export type { BatchColumns, BatchOut, ReaderOptions } from "./reader.js";
export type {
  AtOptions,
  RsopOptions,
  RsopResult,
  RsopHolder,
  RsopRule,
  RsopDevice,
  RsopFloorGroup,
  RsopNodeRef,
} from "./rsop.js";
export type { WhoResult, AccessEntry } from "./who.js";
export type { AccessWindowsResult, AccessInterval, PeriodOptions } from "./accessWindows.js";
export { MAX_WINDOW_SPAN_DAYS } from "./accessWindows.js";
export type { Explanation, TraceRule, TraceStep, TraceStepName } from "./explain.js";
export { DiffBudgetError, diffAccess, planDiff, runDiff } from "./diffAccess.js";
export type { AccessChange, AccessDiff, DiffLimits, DiffOptions, DiffPlan, TimeSpan } from "./diffAccess.js";
export { weeklyPicture } from "./weeklyPicture.js";
export type { PictureDay, PictureOptions, PictureRow, PictureSubject, WeeklyPicture } from "./weeklyPicture.js";
