// What the differential property suites share: how many runs (RSOP_PROPERTY_RUNS), their time limit,
// replaying a reported failure, the decision's fields, and the generated snapshot parsed or failed.
import type { Decision, SystemSnapshot } from "../../src/model/index.js";
import { formatIssues, parseSnapshot } from "../../src/model/index.js";

export const NUM_RUNS = Number(process.env.RSOP_PROPERTY_RUNS ?? 300);
/** A run costs a few milliseconds; long hunts (RSOP_PROPERTY_RUNS=100000) get the time they need. */
export const TIMEOUT = 60_000 + NUM_RUNS * 20;
/**
 * Replays a reported failure: fast-check prints `{ seed, path }`; run with RSOP_PROPERTY_SEED=<seed>
 * RSOP_PROPERTY_PATH=<path> to get the same shrunk counterexample again.
 */
export const REPLAY =
  process.env.RSOP_PROPERTY_SEED === undefined
    ? {}
    : {
        seed: Number(process.env.RSOP_PROPERTY_SEED),
        ...(process.env.RSOP_PROPERTY_PATH ? { path: process.env.RSOP_PROPERTY_PATH } : {}),
      };

/** Every field of a decision, compared one by one. */
export const FIELDS = [
  "outcome",
  "topic",
  "reason",
  "holderId",
  "credentialId",
  "activeRuleId",
  "duress",
  "floors",
  "facilityCode",
  "credentialNumber",
] as const;

/** A plain copy, so internal classes, frozen or reused arrays never decide the comparison. */
export function plain(d: Decision): Decision {
  return { ...d, floors: [...d.floors] };
}

/** A filled-in decision, as a caller reusing one object would pass it. */
export function staleDecision(): Decision {
  return {
    outcome: "allowed",
    topic: "device.request.allowed",
    reason: "ecard",
    holderId: "stale-holder",
    credentialId: "stale-credential",
    activeRuleId: "stale-rule",
    duress: true,
    floors: ["stale-floor"],
    facilityCode: 999,
    credentialNumber: 999,
  };
}

/** The generated snapshot, validated; a generator that made an invalid one fails the run. */
export function parseOrFail(input: unknown): SystemSnapshot {
  const r = parseSnapshot(input);
  if (!r.ok) throw new Error(`generated snapshot refused:\n${formatIssues(r.issues)}\n${JSON.stringify(input)}`);
  return r.value;
}
