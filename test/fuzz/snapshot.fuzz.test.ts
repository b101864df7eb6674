// The library's promise for snapshots (issue 12): parseSnapshot and loadEngine return issues and
// never throw, whatever the input object does — throwing getters, Proxies, revoked Proxies, getters
// deep in the tree, getters whose value changes between reads, getters that parse or decide again.
// Bounded fast-check runs over generated snapshots.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { loadPanelEngine } from "../../src/legacy1/panelEngine.js";
import { parsePanel } from "../../src/legacy1/parsePanel.js";
import { createEngine, loadEngine, loadEngineOrThrow } from "../../src/evaluate/index.js";
import { SnapshotError, parseSnapshot } from "../../src/model/index.js";
import { snapshotAndRequestsArb } from "../arbitraries/index.js";
import { type Path, type Trap, flipValueArb, hostile, maxReads, pathsOf, replaced, styleArb } from "./hostile.js";

const RUNS = Number(process.env.RSOP_FUZZ_RUNS ?? 150);
const UNREADABLE = "Could not be read: reading it threw an error.";

const minimal = {
  format: "rsop-system/1",
  systemId: "s1",
  groups: [{ id: "g1", name: "G" }],
  holders: [
    {
      id: "h1",
      firstName: "A",
      lastName: "B",
      groups: ["g1"],
      credentials: [{ id: "c1", credentialNumber: 7, types: ["card"] }],
    },
  ],
};

describe("parseSnapshot and loadEngine against hostile snapshots", () => {
  test("a revoked Proxy, a throwing getter deep in the tree, a throwing trap: issues at their paths, never a throw", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(parseSnapshot(revoked.proxy)).toEqual({
      ok: false,
      issues: [{ code: "unreadable", path: [], message: UNREADABLE }],
    });
    expect(loadEngine(revoked.proxy).ok).toBe(false);
    expect(() => loadEngineOrThrow(revoked.proxy)).toThrow(SnapshotError);

    const deep = structuredClone(minimal) as { holders: { credentials: Record<string, unknown>[] }[] };
    Object.defineProperty(deep.holders[0]!.credentials[0]!, "credentialNumber", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    expect(parseSnapshot(deep)).toEqual({
      ok: false,
      issues: [{ code: "unreadable", path: ["holders", 0, "credentials", 0, "credentialNumber"], message: UNREADABLE }],
    });

    const keysThrow = new Proxy(
      { groups: [] },
      {
        ownKeys() {
          throw new Error("boom");
        },
      },
    );
    expect(parseSnapshot({ ...minimal, partitions: keysThrow })).toEqual({
      ok: false,
      issues: [{ code: "unreadable", path: ["partitions"], message: UNREADABLE }],
    });
    const revokedGroup = Proxy.revocable({}, {});
    revokedGroup.revoke();
    expect(parseSnapshot({ ...minimal, groups: [revokedGroup.proxy] })).toEqual({
      ok: false,
      issues: [{ code: "unreadable", path: ["groups", 0], message: UNREADABLE }],
    });
  });

  test("a getter whose value changes between reads is read once; the snapshot the engine keeps is plain", () => {
    let reads = 0;
    const input = {
      ...minimal,
      get timezone() {
        reads++;
        return reads === 1 ? "Europe/Paris" : "Mars/Olympus";
      },
    };
    const r = loadEngine(input);
    expect(reads).toBe(1);
    expect(r.ok && r.value.snapshot.timezone).toBe("Europe/Paris");
    expect(r.ok && Object.getOwnPropertyDescriptor(r.value.snapshot, "timezone")?.get).toBeUndefined();
  });

  test("a cyclic or shared input neither loops nor throws", () => {
    // The cycle sits where a value is free to be anything, a custom field value. A value that
    // contains itself nests without end: since the JSON depth limit (HJ2) it is refused at the path
    // where it meets itself again, before any check walks it (it was "Must be a string." before).
    const cyclic: Record<string, unknown> = {
      ...structuredClone(minimal),
      partitions: [{ id: "p1", name: "P" }],
      customFields: [{ id: "notes", type: "object", partition: "p1", fields: [{ id: "self", type: "string" }] }],
    };
    Object.assign((cyclic.holders as Record<string, unknown>[])[0]!, {
      partition: "p1",
      customFields: { notes: { self: cyclic } },
    });
    const r = parseSnapshot(cyclic);
    expect(r.ok ? [] : r.issues).toEqual([
      {
        code: "tooBig",
        path: ["holders", 0, "customFields", "notes", "self"],
        message:
          "Contains itself (a cycle), so it nests without end; a JSON input nests at most 64 arrays and objects.",
      },
    ]);
    (cyclic.holders as { customFields: { notes: { self: unknown } } }[])[0]!.customFields.notes.self = "fine";
    expect(parseSnapshot(cyclic).ok).toBe(true);
    const shared = { id: "g1", name: "G" };
    const twice = parseSnapshot({ ...minimal, groups: [shared, shared] });
    expect(twice.ok ? [] : twice.issues.map((i) => i.code)).toEqual(["duplicateId", "duplicateName"]);
  });

  test("fuzz: generated snapshots, wrapped hostilely at every level", () => {
    const counts = { cases: 0, transparent: 0, thrown: 0, revoked: 0, flipped: 0, reentered: 0 };
    fc.assert(
      fc.property(
        snapshotAndRequestsArb({ maxRequests: 3 }),
        styleArb,
        fc.constantFrom("none", "throw", "revoked", "flip", "reenter"),
        fc.nat(),
        flipValueArb,
        (c, style, kind, pick, flipTo) => {
          const plain = c.snapshot as unknown;
          const expected = parseSnapshot(plain);
          expect(expected.ok).toBe(true);
          const paths = pathsOf(plain).slice(kind === "revoked" || kind === "none" ? 0 : 1);
          const target: Path = paths[pick % paths.length]!;
          const other = { ...minimal, systemId: "other" };
          const trap: Trap | null =
            kind === "none"
              ? null
              : kind === "throw" || kind === "revoked"
                ? { kind }
                : kind === "flip"
                  ? { kind, to: flipTo }
                  : {
                      kind,
                      call: () => {
                        // Another snapshot parsed, compiled and asked from inside a getter of this one.
                        const o = parseSnapshot(other);
                        if (o.ok) createEngine(o.value).decide({ deviceId: "x", at: 0, pin: "1" });
                        loadEngine(other);
                      },
                    };
          const h = hostile(plain, style, kind === "none" ? null : target, trap);
          const got = parseSnapshot(h.value);
          expect(maxReads(h)).toBeLessThanOrEqual(1);
          counts.cases++;
          switch (kind) {
            case "none":
            case "reenter": {
              expect(got).toEqual(expected);
              if (kind === "reenter") expect(h.fired).toBe(1);
              // loadEngine on another hostile copy: the same decisions as the plain engine.
              const engine = loadEngine(hostile(plain, style, kind === "none" ? null : target, trap).value);
              expect(engine.ok).toBe(true);
              const plainEngine = loadEngineOrThrow(plain);
              if (engine.ok)
                for (const req of c.requests) expect(engine.value.decide(req)).toEqual(plainEngine.decide(req));
              if (kind === "none") counts.transparent++;
              else counts.reentered++;
              break;
            }
            case "throw":
            case "revoked":
              expect(got.ok).toBe(false);
              expect(got.ok ? [] : got.issues).toContainEqual({
                code: "unreadable",
                path: target,
                message: UNREADABLE,
              });
              expect(() => loadEngineOrThrow(hostile(plain, style, target, trap).value)).toThrow(SnapshotError);
              if (kind === "throw") counts.thrown++;
              else counts.revoked++;
              break;
            case "flip":
              expect([expected, parseSnapshot(replaced(plain, target, flipTo))]).toContainEqual(got);
              counts.flipped++;
              break;
          }
        },
      ),
      { numRuns: RUNS },
    );
    expect(counts.cases).toBe(RUNS);
    for (const k of ["transparent", "thrown", "revoked", "flipped", "reentered"] as const)
      expect(counts[k]).toBeGreaterThan(0);
  });
});

describe("parsePanel and loadPanelEngine against hostile panels", () => {
  const panel = JSON.parse(readFileSync("examples/panel.json", "utf8")) as unknown;

  test("a revoked Proxy or a throwing getter: unreadable issues at their paths, never a throw", () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(parsePanel(revoked.proxy)).toEqual({
      ok: false,
      issues: [{ code: "unreadable", path: [], message: UNREADABLE }],
    });
    expect(loadPanelEngine(revoked.proxy).ok).toBe(false);
    const paths = pathsOf(panel).slice(1);
    let checked = 0;
    // 16 paths spread over the panel (it has thousands).
    const step = Math.ceil(paths.length / 16);
    for (let k = 0; k < paths.length; k += step) {
      const target = paths[k]!;
      for (const trap of [{ kind: "throw" }, { kind: "revoked" }] as const) {
        const r = parsePanel(hostile(panel, "getters", target, trap).value);
        expect(r.ok ? [] : r.issues).toEqual([{ code: "unreadable", path: target, message: UNREADABLE }]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(30);
  });

  test("behind getters and Proxies, each property read once, a panel loads as the plain one", () => {
    const plain = parsePanel(panel);
    expect(plain.ok).toBe(true);
    for (const style of ["getters", "proxy"] as const) {
      const h = hostile(panel, style, null, null);
      expect(parsePanel(h.value)).toEqual(plain);
      expect(maxReads(h)).toBe(1);
    }
  });
});
