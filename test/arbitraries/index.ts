// Arbitraries for property tests and benchmarks: valid `rsop-system/1` snapshots and requests for
// them. `snapshotAndRequestsArb` is the one the differential property uses.
import fc from "fast-check";
import type { SystemSnapshotInput } from "../../src/model/index.js";
import { type RequestSpec, buildRequest, requestSpecArb } from "./request.js";
import { type SnapshotSpec, buildSnapshot, calendarSnapshotSpecArb, snapshotSpecArb } from "./snapshot.js";

export * from "./calendar.js";
export * from "./cardFormat.js";
export * from "./cloudNode.js";
export * from "./device.js";
export * from "./holder.js";
export * from "./instant.js";
export * from "./localTime.js";
export * from "./noopRule.js";
export * from "./request.js";
export * from "./rule.js";
export * from "./snapshot.js";
export * from "./wiegand.js";
export * from "./window.js";
export * from "./zone.js";

/** One snapshot with several requests for it (plain JSON, as fast-check prints a counterexample). */
export interface SnapshotAndRequests {
  readonly snapshot: SystemSnapshotInput;
  readonly requests: readonly unknown[];
}

/** Builds the case from its specs (exported so a pinned counterexample can be rebuilt). */
export function buildCase(spec: SnapshotSpec, requestSpecs: readonly RequestSpec[]): SnapshotAndRequests {
  const built = buildSnapshot(spec);
  return { snapshot: built.input, requests: requestSpecs.map((r) => buildRequest(built.meta, r)) };
}

export const snapshotAndRequestsArb = (
  opts: { minRequests?: number; maxRequests?: number; calendars?: boolean } = {},
): fc.Arbitrary<SnapshotAndRequests> =>
  fc
    .tuple(
      opts.calendars === true ? calendarSnapshotSpecArb : snapshotSpecArb,
      fc.array(requestSpecArb, { minLength: opts.minRequests ?? 1, maxLength: opts.maxRequests ?? 12 }),
    )
    .map(([spec, reqs]) => buildCase(spec, reqs));
export * from "./operation.js";
export * from "./keyOrder.js";
