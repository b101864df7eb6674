// The library's promise for hostile input (HJ2, HJ3): `live.apply` (2.0 and 1.0) and `parseSnapshot`
// never throw, whatever they are given — bodies nested thousands deep, huge strings, cycles, shared
// sub-trees that nest without end, getters that throw, Proxies, revoked Proxies, values that change
// between reads. A refused operation answers 4xx with its issues at their paths and changes nothing.
// Bounded fast-check runs (RSOP_PROPERTY_RUNS).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { LiveSystem, Operation, OperationResult } from "../../src/live/index.js";
import { type PanelOperationResult, createPanelLiveSystem } from "../../src/legacy1/index.js";
import { type Issue, parseSnapshot } from "../../src/model/index.js";
import { operationSpecArb, resolveOperation, snapshotAndRequestsArb } from "../arbitraries/index.js";
import { panelOperationSpecArb, resolvePanelOperation } from "../arbitraries/panelOperation.js";
import { liveOf } from "../live/fixture.js";
import { NUM_RUNS, REPLAY, TIMEOUT } from "../property/support.js";
import { type Path, type Trap, flipValueArb, hostile, maxReads, pathsOf, replaced, styleArb } from "./hostile.js";

const RUNS = Math.max(20, Math.round(NUM_RUNS / 3));
const MAX = 64;
const UNREADABLE = "Could not be read: reading it threw an error.";
const PANEL: unknown = JSON.parse(readFileSync(resolve(__dirname, "../../examples/panel.json"), "utf8"));

/** Arrays and objects `depth` levels deep (built from the inside out, so no recursion); `kinds` picks each level's. */
function deepValue(depth: number, kinds: "array" | "object" | "mixed"): unknown {
  let v: unknown = "bottom";
  for (let i = depth - 1; i >= 0; i--) v = kinds === "array" || (kinds === "mixed" && i % 2 === 0) ? [v] : { k: v };
  return v;
}

/** The path, below a deepValue placed `level` levels into its document (root = 1), of its first container too deep. */
function firstTooDeep(at: Path, kinds: "array" | "object" | "mixed"): Path {
  const steps = MAX + 1 - (at.length + 1);
  return [
    ...at,
    ...Array.from({ length: steps }, (_, i) => (kinds === "array" || (kinds === "mixed" && i % 2 === 0) ? 0 : "k")),
  ];
}

const kindsArb = fc.constantFrom("array" as const, "object" as const, "mixed" as const);
const depthArb = fc.oneof(fc.integer({ min: MAX + 1, max: 200 }), fc.integer({ min: 1_000, max: 20_000 }));

/** The answer of a refused operation: 4xx, issues each with a path and a sentence, nothing changed. */
function expectRefused(
  r: OperationResult | { ok: boolean; status: number; issues?: readonly Issue[] },
  status?: number,
): readonly Issue[] {
  expect(r.ok).toBe(false);
  if (r.ok) return [];
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.status).toBeLessThan(500);
  if (status !== undefined) expect(r.status).toBe(status);
  const issues = (r as { issues: readonly Issue[] }).issues;
  for (const i of issues) {
    expect(Array.isArray(i.path)).toBe(true);
    expect(i.message.length).toBeGreaterThan(0);
  }
  return issues;
}

/** A live fixture and a generated operation against it (bodies usually valid, sometimes broken). */
const opCaseArb = operationSpecArb.map((spec) => {
  const live = liveOf();
  return { live, op: resolveOperation(live.snapshot, spec) as Operation & { body?: unknown } };
});

/** Paths inside an operation's body (the body itself first), where a hostile value can go. */
function bodyPaths(op: { body?: unknown }): Path[] {
  return op.body === undefined ? [[]] : pathsOf(op.body);
}

describe("HJ3 live.apply never throws on hostile operations", () => {
  test(
    "HJ3 a body nested deeper than 64 levels, anywhere in it: 400 tooBig at the first level too deep; nothing changes",
    () => {
      fc.assert(
        fc.property(opCaseArb, depthArb, kindsArb, fc.nat(), ({ live, op }, depth, kinds, pick) => {
          const paths = bodyPaths(op);
          const at = paths[pick % paths.length]!;
          const body = at.length === 0 ? deepValue(depth, kinds) : replaced(op.body, at, deepValue(depth, kinds));
          const before = live.snapshot;
          const issues = expectRefused(live.apply({ ...op, body }), 400);
          expect(issues).toEqual([
            {
              code: "tooBig",
              path: ["body", ...firstTooDeep(at, kinds)],
              message: expect.stringMatching(/^Nests deeper than 64 arrays and objects/),
            },
          ]);
          expect(live.snapshot).toBe(before);
          // In a batch the operation is refused at its index; check() answers the same refusal.
          const batch = live.apply([
            { method: "GET", path: "/groups" },
            { ...op, body },
          ]);
          expect(batch).toMatchObject({ ok: false, status: 400, index: 1 });
          expect(live.check([{ ...op, body }])[0]).toMatchObject({ ok: false, status: 400 });
          expect(live.snapshot).toBe(before);
        }),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "HJ3 cycles and shared sub-trees that nest without end: 400 at the path, never a loop or a throw",
    () => {
      fc.assert(
        fc.property(opCaseArb, fc.nat(), fc.integer({ min: 20, max: 60 }), ({ live, op }, pick, chain) => {
          const object = op.body !== null && typeof op.body === "object" && !Array.isArray(op.body);
          const cyclic = (object ? structuredClone(op.body) : { x: 1 }) as Record<string, unknown>;
          const paths = pathsOf(cyclic).filter((p) => p.length > 0);
          const at = paths.length === 0 ? ["self"] : paths[pick % paths.length]!;
          // Point `at` back at the body: a cycle (replaced() copies, so set it in place).
          let parent: Record<string | number, unknown> = cyclic;
          for (const k of at.slice(0, -1)) parent = (parent[k] as Record<string | number, unknown>) ?? {};
          if (parent === null || typeof parent !== "object") return;
          parent[at.at(-1)!] = cyclic;
          const issues = expectRefused(live.apply({ ...op, body: cyclic }), 400);
          expect(issues.map((i) => i.code)).toContain("tooBig");
          // A chain whose every link is shared twice: 2^chain paths, each copied once and measured once.
          let shared: unknown = "end";
          for (let i = 0; i < chain; i++) shared = [shared, shared];
          const r = live.apply({ ...op, body: { ...cyclic, x: shared, self: null } });
          if (chain + 1 > MAX) expectRefused(r, 400);
          // Two shared links: the second reaches the shared tree one level deeper, and only that path is
          // too deep — refused where the tree is met again, as it was measured once.
          const tree = deepValue(MAX - 1, "array");
          const twice = expectRefused(
            live.apply({ method: "POST", path: "/groups", body: { a: tree, b: { c: tree } } }),
            400,
          );
          expect(twice).toEqual([
            { code: "tooBig", path: ["body", "b", "c"], message: expect.stringMatching(/^Nests deeper than 64/) },
          ]);
          expect(live.apply({ method: "POST", path: "/groups", body: { a: tree, b: tree } })).not.toMatchObject({
            issues: [{ code: "tooBig" }],
          });
        }),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "HJ3 getters and Proxies (throwing, revoked, changing between reads): each property read once; a read that throws is a 400 at its path; otherwise the plain operation's answer",
    () => {
      fc.assert(
        fc.property(
          operationSpecArb,
          styleArb,
          fc.constantFrom("none", "throw", "revoked", "flip"),
          fc.nat(),
          flipValueArb,
          (spec, style, kind, pick, flipTo) => {
            const plainLive = liveOf();
            const op = resolveOperation(plainLive.snapshot, spec);
            const paths = pathsOf(op).slice(kind === "revoked" || kind === "none" ? 0 : 1);
            const target = paths[pick % paths.length]!;
            const trap: Trap | null = kind === "none" ? null : kind === "flip" ? { kind, to: flipTo } : { kind };
            const h = hostile(op, style, kind === "none" ? null : target, trap);
            const live = liveOf();
            const before = live.snapshot;
            let got: OperationResult | undefined;
            expect(() => (got = live.apply(h.value as Operation))).not.toThrow();
            expect(maxReads(h)).toBeLessThanOrEqual(1);
            // A revoked Proxy as `method` or `path` is read without a throw, and is no string: not an operation.
            const copied = target.length === 0 || target[0] === "body";
            if (kind === "throw" || (kind === "revoked" && copied)) {
              expect(expectRefused(got!, 400)).toEqual([{ code: "unreadable", path: target, message: UNREADABLE }]);
              expect(live.snapshot).toBe(before);
            } else if (kind === "revoked") {
              expect(expectRefused(got!, 400)).toEqual([
                { code: "invalid", path: [], message: 'An operation is {"method", "path", "body"?}.' },
              ]);
              expect(live.snapshot).toBe(before);
            } else expect(got).toEqual(plainLive.apply(op));
          },
        ),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test("HJ3 a hostile batch: a revoked Proxy, a throwing length, a throwing element — a 400, never a throw", () => {
    const live = liveOf();
    const before = live.snapshot;
    const revoked = Proxy.revocable([], {});
    revoked.revoke();
    expect(live.apply(revoked.proxy as unknown as Operation[])).toEqual({
      ok: false,
      status: 400,
      issues: [{ code: "unreadable", path: [], message: UNREADABLE }],
    });
    const badLength = new Proxy([] as Operation[], {
      get(t, p, r) {
        if (p === "length") throw new Error("hostile length");
        return Reflect.get(t, p, r);
      },
    });
    expect(live.apply(badLength)).toMatchObject({ ok: false, status: 400 });
    const badElement = [{ method: "POST", path: "/groups", body: { name: "Fine" } }] as Operation[];
    Object.defineProperty(badElement, 1, {
      enumerable: true,
      get() {
        throw new Error("hostile element");
      },
    });
    expect(live.apply(badElement)).toEqual({
      ok: false,
      status: 400,
      index: 1,
      issues: [{ code: "unreadable", path: [], message: UNREADABLE }],
    });
    expect(live.snapshot).toBe(before);
    expect(live.check(revoked.proxy as unknown as Operation[])).toMatchObject([{ ok: false, status: 400 }]);
    // preview reads its operations the same way: a 400 naming the operation, never a throw.
    expect(live.preview(revoked.proxy as unknown as Operation[])).toEqual({
      ok: false,
      status: 400,
      index: 0,
      issues: [{ code: "unreadable", path: [], message: UNREADABLE }],
    });
    expect(live.preview(badLength)).toMatchObject({ ok: false, status: 400 });
    expect(live.preview(badElement)).toMatchObject({ ok: false, status: 400, index: 1 });
    expect(live.snapshot).toBe(before);
  });

  test(
    "HJ3 huge strings anywhere in a body: answered (accepted or 4xx), never thrown",
    () => {
      fc.assert(
        fc.property(
          opCaseArb,
          fc.nat(),
          fc.integer({ min: 100_000, max: 2_000_000 }),
          fc.constantFrom("x", "9", "é", "\u0000"),
          ({ live, op }, pick, n, ch) => {
            const paths = bodyPaths(op);
            const at = paths[pick % paths.length]!;
            const huge = ch.repeat(n);
            const body = at.length === 0 ? huge : replaced(op.body, at, huge);
            let r: OperationResult | undefined;
            expect(() => (r = live.apply({ ...op, body }))).not.toThrow();
            if (!r!.ok) expectRefused(r!);
          },
        ),
        { numRuns: Math.max(10, Math.round(RUNS / 3)), ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "HJ3 the 1.0 panel's apply: deep, cyclic and unreadable bodies are a 400, never a throw",
    () => {
      fc.assert(
        fc.property(
          panelOperationSpecArb,
          depthArb,
          kindsArb,
          fc.constantFrom("deep", "cycle", "throw"),
          (spec, depth, kinds, kind) => {
            const made = createPanelLiveSystem(PANEL);
            if (!made.ok) throw new Error("the example panel does not load");
            const live = made.value;
            const op = resolvePanelOperation(live.snapshot, spec) as Operation & { body?: unknown };
            const before = live.snapshot;
            let body: unknown;
            if (kind === "deep")
              body = {
                ...(typeof op.body === "object" && op.body !== null ? op.body : {}),
                extra: deepValue(depth, kinds),
              };
            else if (kind === "cycle") {
              const c: Record<string, unknown> = {
                ...(typeof op.body === "object" && op.body !== null ? op.body : {}),
              };
              c.self = c;
              body = c;
            } else
              body = Object.defineProperty({}, "firstName", {
                enumerable: true,
                get() {
                  throw new Error("hostile");
                },
              });
            let r: PanelOperationResult | undefined;
            expect(() => (r = live.apply({ ...op, body }))).not.toThrow();
            const issues = expectRefused(r!, 400);
            if (kind === "deep")
              expect(issues).toEqual([
                { code: "tooBig", path: ["body", ...firstTooDeep(["extra"], kinds)], message: expect.any(String) },
              ]);
            if (kind === "throw")
              expect(issues).toEqual([{ code: "unreadable", path: ["body", "firstName"], message: UNREADABLE }]);
            expect(live.snapshot).toBe(before);
          },
        ),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );
});

describe("HJ2 parseSnapshot never throws on hostile snapshots", () => {
  test(
    "HJ2 a value nested deeper than 64 levels anywhere: tooBig at the first level too deep, plainJson or not, wrapped in getters or Proxies or not",
    () => {
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ minRequests: 0, maxRequests: 0 }),
          depthArb,
          kindsArb,
          fc.nat(),
          fc.constantFrom("plain", "getters", "proxy"),
          (c, depth, kinds, pick, style) => {
            const plain = c.snapshot as unknown;
            const paths = pathsOf(plain);
            const at = paths[pick % paths.length]!;
            // The test's own hostile() recurses: a wrapped deep value stays a few thousand levels.
            const d = style === "plain" ? depth : Math.min(depth, 2_000);
            const deep = at.length === 0 ? deepValue(d, kinds) : replaced(plain, at, deepValue(d, kinds));
            const expected = [
              {
                code: "tooBig",
                path: firstTooDeep(at, kinds),
                message: "Nests deeper than 64 arrays and objects, the most a JSON input may have.",
              },
            ];
            const input = style === "plain" ? deep : hostile(deep, style, null, null).value;
            let r: ReturnType<typeof parseSnapshot> | undefined;
            expect(() => (r = parseSnapshot(input))).not.toThrow();
            expect(r).toEqual({ ok: false, issues: expected });
            if (style === "plain")
              expect(parseSnapshot(deep, { plainJson: true })).toEqual({ ok: false, issues: expected });
          },
        ),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );

  test(
    "HJ2 cycles, endless shared sub-trees, huge strings, throwing and revoked reads: issues, never a throw",
    () => {
      fc.assert(
        fc.property(
          snapshotAndRequestsArb({ minRequests: 0, maxRequests: 0 }),
          fc.constantFrom("cycle", "shared", "huge", "throw", "revoked"),
          fc.nat(),
          styleArb,
          (c, kind, pick, style) => {
            const plain = structuredClone(c.snapshot) as Record<string, unknown>;
            const paths = pathsOf(plain).slice(1);
            const at = paths[pick % paths.length]!;
            let input: unknown;
            if (kind === "cycle" || kind === "shared" || kind === "huge") {
              let value: unknown;
              if (kind === "cycle") value = plain;
              else if (kind === "shared") {
                value = "end";
                for (let i = 0; i < 70; i++) value = [value, value];
              } else value = "9".repeat(1_000_000);
              input = replaced(plain, at, value);
              if (kind === "cycle") {
                // replaced() copies the tree; the cycle must point at the very root given.
                let parent = input as Record<string | number, unknown>;
                for (const k of at.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
                parent[at.at(-1)!] = input;
              }
            } else input = hostile(plain, style, at, { kind }).value;
            let r: ReturnType<typeof parseSnapshot> | undefined;
            expect(() => (r = parseSnapshot(input))).not.toThrow();
            if (kind !== "huge") {
              expect(r!.ok).toBe(false);
              const issue = r!.ok ? undefined : r!.issues[0];
              expect(issue?.path).toEqual(kind === "shared" ? [...at, ...Array<number>(MAX - at.length).fill(0)] : at);
              expect(issue?.code).toBe(kind === "throw" || kind === "revoked" ? "unreadable" : "tooBig");
            } else if (!r!.ok) for (const i of r!.issues) expect(i.message.length).toBeLessThan(1_000);
          },
        ),
        { numRuns: RUNS, ...REPLAY },
      );
    },
    TIMEOUT,
  );
});

test("HJ3 live.apply on a deep body from a library caller did throw RangeError; it answers 400 now", () => {
  const live: LiveSystem = liveOf();
  const body = { firstName: "A", lastName: "B", customFields: { note: deepValue(100_000, "object") } };
  expect(expectRefused(live.apply({ method: "POST", path: "/holders", body }), 400).map((i) => i.code)).toEqual([
    "tooBig",
  ]);
});

test("HJ5 a 1.0 panel's attributes: a backreference is refused as outside the linear-time subset; ^(a+)+$|^a*!$ answers at once", () => {
  const made = createPanelLiveSystem(PANEL);
  if (!made.ok) throw new Error("the example panel does not load");
  const live = made.value;
  const refusedDef = live.apply({
    method: "POST",
    path: "/api/partitions/0/attributes/single",
    body: { id: "twice", type: "string", regex: "^(a)\\1$" },
  });
  expect(
    expectRefused(refusedDef, 400).map((i) => [
      i.path,
      i.message.startsWith("Must be a regular expression of the linear-time (RE2) subset"),
    ]),
  ).toEqual([[["body", "regex"], true]]);
  expect(
    live.apply({
      method: "POST",
      path: "/api/partitions/0/attributes/single",
      body: { id: "code", type: "string", regex: "^(a+)+$|^a*!$" },
    }),
  ).toMatchObject({ ok: true });
  const person = (code: string) =>
    live.apply({
      method: "POST",
      path: "/api/persons",
      body: { firstName: "Ann", lastName: "Lee", partition: 0, customAttributes: { code } },
    });
  expect(expectRefused(person(`${"a".repeat(40)}b`), 400)).toEqual([
    { code: "invalidValue", path: ["body", "customAttributes", "code"], message: "Must match ^(a+)+$|^a*!$." },
  ]);
  expect(person(`${"a".repeat(40)}!`)).toMatchObject({ ok: true, status: 200 });
});
