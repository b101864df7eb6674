// The library's promise for requests (issue 12): decide, requestIssues and PanelEngine.decide never
// throw and never answer from a half-read request — not for getters that throw, Proxies, revoked
// Proxies, getters whose value changes between reads, nor getters that call decide again. Bounded
// fast-check runs over generated snapshots and requests, plus the shipped examples exhaustively.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { loadPanelEngineOrThrow } from "../../src/legacy1/panelEngine.js";
import { type Engine, createEngine, loadEngineOrThrow } from "../../src/evaluate/index.js";
import { type Decision, encodeWiegand, parseSnapshotOrThrow, requestIssues } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import {
  type Hostile,
  type Path,
  type Style,
  type Trap,
  flipValueArb,
  hostile,
  maxReads,
  pathsOf,
  replaced,
  styleArb,
} from "./hostile.js";

const RUNS = Number(process.env.RSOP_FUZZ_RUNS ?? 200);

const building = loadEngineOrThrow(JSON.parse(readFileSync("examples/building.json", "utf8")));
const exampleRequests = readFileSync("examples/requests.jsonl", "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as unknown);

function plainDecision(d: Decision): Decision {
  return { ...d, floors: [...d.floors] };
}

const BAD_REQUEST: Decision = {
  outcome: "denied",
  topic: "device.request.denied",
  reason: "badRequest",
  holderId: null,
  credentialId: null,
  activeRuleId: null,
  duress: false,
  floors: [],
  facilityCode: null,
  credentialNumber: null,
};

/** decide with a fresh decision and with a stale `out` (each on a fresh copy); both must agree and neither may throw. */
function decideBoth(engine: Engine, make: () => Hostile): Decision {
  const fresh = plainDecision(engine.decide(make().value));
  const out = plainDecision(BAD_REQUEST);
  out.reason = "allowed";
  out.holderId = "stale";
  const reused = plainDecision(engine.decide(make().value, out));
  expect(reused).toEqual(fresh);
  return fresh;
}

type TrapKind = "none" | "throw" | "revoked" | "flip" | "reenter";

/** Checks one hostile request against the plain one; returns whether the trap fired. */
function checkOne(
  engine: Engine,
  plain: unknown,
  style: Style,
  kind: TrapKind,
  target: Path,
  flipTo: unknown,
  other: unknown,
): boolean {
  const expected = plainDecision(engine.decide(plain));
  const trap: Trap | null =
    kind === "none"
      ? null
      : kind === "throw"
        ? { kind }
        : kind === "revoked"
          ? { kind }
          : kind === "flip"
            ? { kind, to: flipTo }
            : {
                kind,
                call: () => {
                  // Another scan, decided and checked from inside a getter of this one.
                  engine.decide(other);
                  engine.decide(other, plainDecision(BAD_REQUEST));
                  requestIssues(other);
                },
              };
  const make = (): Hostile => hostile(plain, style, kind === "none" ? null : target, trap);
  const got = decideBoth(engine, make);
  // Each field of the request is read at most once per decision (decideBoth decides twice).
  const once = make();
  engine.decide(once.value);
  expect(maxReads(once)).toBeLessThanOrEqual(1);
  const targetRead = (once.reads.get(JSON.stringify(target)) ?? 0) > 0 || target.length === 0;
  switch (kind) {
    case "none":
    case "reenter":
      expect(got).toEqual(expected);
      break;
    case "throw":
      expect(got).toEqual(once.fired > 0 ? BAD_REQUEST : expected);
      break;
    case "revoked":
      expect(got).toEqual(targetRead ? BAD_REQUEST : expected);
      break;
    case "flip": {
      const flipped = plainDecision(engine.decide(replaced(plain, target, flipTo)));
      expect([expected, flipped]).toContainEqual(got);
      break;
    }
  }
  // requestIssues: never throws, names the unreadable field, and otherwise agrees with the plain request.
  const issues = requestIssues(make().value);
  if (kind === "throw" && once.fired > 0)
    expect(issues).toContainEqual(expect.objectContaining({ code: "unreadable", path: target }));
  else if (kind === "revoked" && targetRead) expect(issues.length).toBeGreaterThan(0);
  else if (kind === "none" || kind === "reenter") expect(issues).toEqual(requestIssues(plain));
  return once.fired > 0;
}

describe("decide and requestIssues against hostile requests", () => {
  test("re-entrancy (issue 12): an unknown card whose getter decides another holder's card is not allowed as that holder", () => {
    const at = "2026-04-15T10:00:00+01:00";
    const other = { deviceId: "door-lon-clinic", at, credential: { wiegand: "00010101001111010011010011" } };
    expect(building.decide(other)).toMatchObject({ outcome: "allowed", holderId: "holder-0008" });
    const unknownFrame = encodeWiegand("H10301", { facilityCode: 42, cardNumber: 31338 });
    const plain = { deviceId: "door-lon-clinic", at, credential: { wiegand: unknownFrame } };
    const expected = plainDecision(building.decide(plain));
    expect(expected).toMatchObject({
      outcome: "unknown",
      reason: "unknownCredential",
      holderId: null,
      credentialNumber: 31338,
    });
    let calls = 0;
    const reentrant = {
      ...plain,
      get node() {
        calls++;
        building.decide(other);
        return { online: true };
      },
    };
    expect(plainDecision(building.decide(reentrant))).toEqual(expected);
    expect(plainDecision(building.decide(reentrant, plainDecision(BAD_REQUEST)))).toEqual(expected);
    expect(calls).toBe(2);
  });

  test("a getter whose value changes between reads: the decision for the value read, each field read once", () => {
    const at = "2026-04-15T10:00:00+01:00";
    let reads = 0;
    const request = {
      deviceId: "door-lon-clinic",
      at,
      get credential() {
        reads++;
        return reads === 1 ? { credentialNumber: 31338, facilityCode: 42 } : { wiegand: "00010101001111010011010011" };
      },
    };
    expect(plainDecision(building.decide(request))).toEqual(
      plainDecision(
        building.decide({ deviceId: "door-lon-clinic", at, credential: { credentialNumber: 31338, facilityCode: 42 } }),
      ),
    );
    expect(reads).toBe(1);
  });

  test("throwing getters, Proxies and revoked Proxies: badRequest, never a throw; requestIssues names the field", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(building.decide(revoked.proxy)).toEqual(BAD_REQUEST);
    expect(requestIssues(revoked.proxy)).toEqual([
      { code: "unreadable", path: [], message: "Could not be read: reading it threw an error." },
    ]);
    const throwing = {
      deviceId: "door-lon-clinic",
      at: "2026-04-15T10:00:00+01:00",
      credential: {
        credentialNumber: 1,
        get facilityCode(): number {
          throw new Error("boom");
        },
      },
    };
    expect(building.decide(throwing)).toEqual(BAD_REQUEST);
    expect(requestIssues(throwing)).toEqual([
      {
        code: "unreadable",
        path: ["credential", "facilityCode"],
        message: "Could not be read: reading it threw an error.",
      },
    ]);
    const trapThrows = new Proxy(
      {},
      {
        get() {
          throw new Error("boom");
        },
      },
    );
    expect(building.decide(trapThrows)).toEqual(BAD_REQUEST);
    expect(requestIssues(trapThrows)).toEqual([
      { code: "unreadable", path: ["deviceId"], message: "Could not be read: reading it threw an error." },
    ]);
  });

  test("every field of every example request, in every hostile way (exhaustive)", () => {
    let cases = 0;
    let fired = 0;
    for (const [n, plain] of exampleRequests.entries()) {
      const other = exampleRequests[(n + 7) % exampleRequests.length];
      for (const target of pathsOf(plain))
        for (const style of ["getters", "proxy"] as const)
          for (const kind of ["none", "throw", "revoked", "flip", "reenter"] as const) {
            if (target.length === 0 && kind !== "revoked" && kind !== "none") continue;
            if (checkOne(building, plain, style, kind, target, null, other)) fired++;
            cases++;
          }
    }
    expect(cases).toBeGreaterThan(1000);
    expect(fired).toBeGreaterThan(cases / 4);
  });

  test("fuzz: generated snapshots and requests, wrapped hostilely", () => {
    let cases = 0;
    let fired = 0;
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 6 }),
        styleArb,
        fc.constantFrom<TrapKind>("none", "throw", "revoked", "flip", "reenter"),
        fc.nat(),
        flipValueArb,
        fc.nat(),
        (c, style, kind, pick, flipTo, otherPick) => {
          const engine = createEngine(parseSnapshotOrThrow(c.snapshot));
          for (const plain of c.requests) {
            const paths = pathsOf(plain).slice(kind === "revoked" || kind === "none" ? 0 : 1);
            if (paths.length === 0) continue;
            const target = paths[pick % paths.length]!;
            if (checkOne(engine, plain, style, kind, target, flipTo, c.requests[otherPick % c.requests.length]))
              fired++;
            cases++;
          }
        },
      ),
      { numRuns: RUNS },
    );
    expect(cases).toBeGreaterThan(RUNS);
    expect(fired).toBeGreaterThan(0);
  });
});

describe("PanelEngine.decide against hostile requests", () => {
  const panel = loadPanelEngineOrThrow(JSON.parse(readFileSync("examples/panel.json", "utf8")));
  const key = panel.loaded.system.devices[0]!.id;
  const deviceId = Number(key.replace(/\D+/g, ""));

  test("a revoked Proxy, a throwing getter or a trap: badRequest with 1.0 topics, never a throw", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(panel.decide(revoked.proxy)).toMatchObject({
      outcome: "denied",
      reason: "badRequest",
      topic: "door.request.denied",
    });
    expect(panel.requestIssues(revoked.proxy)).toEqual([
      { code: "unreadable", path: [], message: "Could not be read: reading it threw an error." },
    ]);
    const throwing = {
      deviceId,
      at: "2026-04-15T10:00:00Z",
      get pin(): string {
        throw new Error("boom");
      },
    };
    expect(panel.decide(throwing)).toMatchObject({ outcome: "denied", reason: "badRequest" });
    expect(() => panel.requestIssues(throwing)).not.toThrow();
    const credRevoked = Proxy.revocable({}, {});
    credRevoked.revoke();
    expect(panel.decide({ deviceId, at: "2026-04-15T10:00:00Z", credential: credRevoked.proxy })).toMatchObject({
      reason: "badRequest",
    });
    expect(() =>
      panel.requestIssues({ deviceId, at: "2026-04-15T10:00:00Z", credential: credRevoked.proxy }),
    ).not.toThrow();
  });

  test("a getter whose value changes between reads is read once", () => {
    let reads = 0;
    const request = {
      at: "2026-04-15T10:00:00Z",
      pin: "1234",
      get deviceId() {
        reads++;
        return reads === 1 ? deviceId : "not-an-id";
      },
    };
    const d = panel.decide(request);
    expect(reads).toBe(1);
    expect(d).toEqual(panel.decide({ deviceId, at: "2026-04-15T10:00:00Z", pin: "1234" }));
  });
});
