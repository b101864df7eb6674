import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { formatIssues, parseSnapshot } from "../../src/model/index.js";
import { KNOWN_FORMAT_IDS } from "./cardFormat.js";
import { buildSnapshot, snapshotSpecArb } from "./snapshot.js";

const RUNS = Number(process.env.RSOP_PROPERTY_RUNS ?? 300);

describe("snapshot arbitrary", () => {
  test("every generated snapshot passes parseSnapshot", () => {
    fc.assert(
      fc.property(snapshotSpecArb, (spec) => {
        const { input } = buildSnapshot(spec);
        const r = parseSnapshot(input);
        if (!r.ok) expect.fail(`generated snapshot refused:\n${formatIssues(r.issues)}\n${JSON.stringify(input)}`);
      }),
      { numRuns: Math.max(RUNS, 500) },
    );
  });

  test("generated snapshots cover the interactions the brief lists", () => {
    const seen = new Set<string>();
    const mark = (cond: boolean, what: string) => cond && seen.add(what);
    for (const spec of fc.sample(snapshotSpecArb, { numRuns: 400, seed: 42 })) {
      const { input, meta } = buildSnapshot(spec);
      const s = input as unknown as Record<"cloudNodes" | "rules" | "devices" | "holders" | "floorGroups", any[]> & {
        timezone?: string;
      };
      for (const n of s.cloudNodes) {
        mark(n.timezone === undefined || n.timezone === null, "node without zone");
        mark(n.timezone === "Australia/Lord_Howe", "Lord Howe");
        mark(n.timezone === "America/Santiago", "Santiago");
        mark(n.offlinePolicy === 1, "offlinePolicy 1");
        mark(n.offlinePolicy === 2, "offlinePolicy 2");
        for (const f of n.cardFormat ?? []) {
          mark(f.facility_code === "FILTER_LIST", "FILTER_LIST");
          mark(f.facility_code === "NOT_ENFORCED", "NOT_ENFORCED");
          mark(f.enforce_parity === false, "parity off");
          mark(typeof f.layout === "object" && f.layout !== null, "custom layout");
          mark(typeof f.layout === "string", "layout name");
          mark((f.layout === undefined || f.layout === null) && !KNOWN_FORMAT_IDS.includes(f.id), "raw format");
          mark(
            (f.layout === undefined || f.layout === null) && !KNOWN_FORMAT_IDS.includes(f.id) && f.max_input_bits > 53,
            "raw format longer than 53 bits",
          );
        }
        mark(
          (n.ecards ?? []).some((e: number) => meta.cards.some((c) => c.number === e)),
          "ecard overlapping a card",
        );
      }
      for (const r of s.rules) {
        mark(r.startTime > r.stopTime, "overnight window");
        mark(r.startTime === r.stopTime, "24-hour window");
        mark(r.startTime === "00:00:00" && r.stopTime === "24:00:00", "full-day window");
        mark(r.allow === false, "deny rule");
        mark(r.enabled === false, "disabled rule");
        mark(r.type === "elevator", "elevator rule");
        mark(typeof r.startDate === "string" && typeof r.endDate === "string", "dated rule");
        for (const p of ["cardOnly", "pinOnly", "cardOrPin", "cardAndPin"])
          mark(r.authenticationPolicy === p, `rule ${p}`);
      }
      for (const d of s.devices) {
        mark(d.securedReadsOnly === true, "securedReadsOnly");
        mark(d.supportBleCredentials === true, "BLE");
        mark(Array.isArray(d.inputTypes) && d.inputTypes.length < 3, "inputTypes subset");
        mark(d.type === "additionalElevatorReader", "additional elevator reader");
        mark(d.type === "floorRelay" && d.id === "fl-1b", "three floor relays");
        mark(d.type === "additionalReader", "additional reader");
        for (const p of ["cardOnly", "pinOnly", "cardOrPin", "cardAndPin"])
          mark(d.authenticationPolicy === p, `device ${p}`);
      }
      const pins = meta.holders.map((h) => h.pin).filter((p) => p !== null);
      mark(new Set(pins).size < pins.length, "shared PIN");
      mark(
        meta.holders.some((h) => h.duressPin !== null),
        "duress PIN",
      );
      mark(
        meta.holders.some((h) => h.activeDate !== null && h.expireDate !== null),
        "holder dates",
      );
      mark(
        meta.digital.some((c) => c.number === null),
        "pending credential",
      );
      mark(
        meta.cards.some((c) => c.facilityCode === null),
        "card without facility code",
      );
      mark(
        s.holders.some((h) => h.enabled === false),
        "disabled holder",
      );
      mark(
        (s.floorGroups ?? []).filter((f) => f.readerPort === "e1").length > 31,
        "more than 31 floor groups at a reader",
      );
    }
    const expected = [
      "node without zone",
      "Lord Howe",
      "Santiago",
      "three floor relays",
      "more than 31 floor groups at a reader",
      "offlinePolicy 1",
      "offlinePolicy 2",
      "FILTER_LIST",
      "NOT_ENFORCED",
      "parity off",
      "custom layout",
      "layout name",
      "raw format",
      "raw format longer than 53 bits",
      "ecard overlapping a card",
      "overnight window",
      "24-hour window",
      "full-day window",
      "deny rule",
      "disabled rule",
      "elevator rule",
      "dated rule",
      "securedReadsOnly",
      "BLE",
      "inputTypes subset",
      "additional elevator reader",
      "additional reader",
      "shared PIN",
      "duress PIN",
      "holder dates",
      "pending credential",
      "card without facility code",
      "disabled holder",
      ...["cardOnly", "pinOnly", "cardOrPin", "cardAndPin"].flatMap((p) => [`rule ${p}`, `device ${p}`]),
    ];
    expect(expected.filter((e) => !seen.has(e))).toEqual([]);
  });
});
