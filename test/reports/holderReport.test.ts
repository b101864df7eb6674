// Issue 17's scenarios for the library: each filter type and operator, each refusal, the record
// formats of 2.0 and 1.0, and each export (CSV parses back, HTML escapes holder text).
import { parse } from "csv-parse/sync";
import { describe, expect, test } from "vitest";
import { loadPanelEngineOrThrow } from "../../src/legacy1/panelEngine.js";
import { createEngine } from "../../src/evaluate/index.js";
import {
  HOLDER_PROPERTIES,
  PREVIEW_LIMIT,
  holderReport,
  peopleReport,
  rsopReport,
  toCsv,
  toHtml,
  toJson,
} from "../../src/reports/index.js";
import { parseSnapshotOrThrow } from "../../src/model/index.js";
import { smallPanel } from "../live/panelFixture.js";
import { reportSystem, reportSystemInput } from "./fixture.js";

const snap = reportSystem();

function ids(body: unknown): string[] {
  const r = holderReport(snap, { ...(body as object), output: ["id"] });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.value.map((x) => x.id as string);
}

function issues(body: unknown): { path: string; code: string }[] {
  const r = holderReport(snap, body);
  if (r.ok) throw new Error("accepted");
  return r.issues.map((i) => ({ path: i.path.join("."), code: i.code }));
}

describe("order and records", () => {
  test("records come in lastName, firstName, id order (UTF-16 code units, RP3)", () => {
    expect(ids({})).toEqual(["h-dan", "h-cat", "h-ann", "h-bob", "h-eve"]);
  });

  test("the seed 001 record: every property in seed order, cards and groups comma-delimited, dates YYYY-MM-DD HH:mm:ss, counts, custom fields as JSON", () => {
    const r = holderReport(snap, { filters: [{ type: "firstName", operator: "equals", operand: "Ann" }] });
    expect(r.ok && r.value).toEqual([
      {
        id: "h-ann",
        firstName: "Ann",
        lastName: "Lee",
        email: "ann.lee@example.com",
        partition: "Main",
        cards: "10000, 10050",
        groups: "Day",
        pin: "2468",
        duressPin: "8642",
        enabled: true,
        activeDate: "2026-01-05 08:00:00",
        expireDate: "2026-12-31 18:00:00",
        bluetooth: 1,
        pendingBluetooth: 0,
        mobileApp: 0,
        pendingMobileApp: 0,
        customFields: '{"badge":"B-1"}',
      },
    ]);
    expect(Object.keys((r.ok && r.value[0]) || {})).toEqual([...HOLDER_PROPERTIES]);
  });

  test("a credential with touch and token counts in both; pending ones count apart (RP5)", () => {
    const r = holderReport(snap, { output: ["id", "bluetooth", "pendingBluetooth", "mobileApp", "pendingMobileApp"] });
    expect(r.ok && r.value.filter((x) => ["h-bob", "h-cat", "h-eve"].includes(x.id as string))).toEqual([
      { id: "h-cat", bluetooth: 1, pendingBluetooth: 0, mobileApp: 1, pendingMobileApp: 0 },
      { id: "h-bob", bluetooth: 0, pendingBluetooth: 0, mobileApp: 0, pendingMobileApp: 1 },
      { id: "h-eve", bluetooth: 0, pendingBluetooth: 1, mobileApp: 0, pendingMobileApp: 0 },
    ]);
  });

  test("RP8: output picks and orders the properties", () => {
    const r = holderReport(snap, { output: ["lastName", "id"], filters: [{ type: "enabled", value: false }] });
    expect(r.ok && r.value).toEqual([{ lastName: "Adams", id: "h-cat" }]);
    expect(Object.keys((r.ok && r.value[0]) || {})).toEqual(["lastName", "id"]);
  });

  test("a holder without a partition is in the default partition, and its record says so (RP2)", () => {
    expect(
      holderReport(snap, { output: ["id", "partition"], filters: [{ type: "partition", memberOf: ["p-main"] }] }),
    ).toEqual({
      ok: true,
      value: [
        { id: "h-cat", partition: "Main" },
        { id: "h-ann", partition: "Main" },
        { id: "h-bob", partition: "Main" },
      ],
    });
  });

  test("a preview limit keeps the first records in report order", () => {
    expect(PREVIEW_LIMIT).toBe(50);
    const r = holderReport(snap, { output: ["id"] }, { limit: 2 });
    expect(r.ok && r.value).toEqual([{ id: "h-dan" }, { id: "h-cat" }]);
  });
});

describe("filters", () => {
  test.each([
    ["equals", "lee", false, ["h-ann", "h-bob", "h-eve"]],
    ["equals", "lee", true, ["h-eve"]],
    ["does not equal", "LEE", false, ["h-dan", "h-cat"]],
    ["does not equal", "Lee", true, ["h-dan", "h-cat", "h-eve"]],
    ["contains", "E", false, ["h-dan", "h-ann", "h-bob", "h-eve"]],
    ["contains", "L", true, ["h-dan", "h-ann", "h-bob"]],
    ["does not contain", "d", false, ["h-dan", "h-ann", "h-bob", "h-eve"]],
    ["does not contain", "a", true, ["h-dan", "h-ann", "h-bob", "h-eve"]],
  ] as const)("lastName %s %j (caseSensitive %s)", (operator, operand, caseSensitive, expected) => {
    expect(ids({ filters: [{ type: "lastName", operator, operand, caseSensitive }] })).toEqual(expected);
  });

  test("RP4: firstName: caseSensitive defaults to false", () => {
    expect(ids({ filters: [{ type: "firstName", operator: "equals", operand: "EVE" }] })).toEqual(["h-eve"]);
  });

  test('RP4: email: a missing email is the empty string (equals "" finds holders without one, RP4)', () => {
    expect(ids({ filters: [{ type: "email", operator: "equals", operand: "" }] })).toEqual(["h-cat"]);
    expect(ids({ filters: [{ type: "email", operator: "contains", operand: "EXAMPLE.com" }] })).toEqual([
      "h-ann",
      "h-bob",
    ]);
    expect(ids({ filters: [{ type: "email", operator: "does not contain", operand: "example" }] })).toEqual([
      "h-dan",
      "h-cat",
      "h-eve",
    ]);
  });

  test("enabled with value", () => {
    expect(ids({ filters: [{ type: "enabled", value: false }] })).toEqual(["h-cat"]);
    expect(ids({ filters: [{ type: "enabled", value: true }] })).toEqual(["h-dan", "h-ann", "h-bob", "h-eve"]);
  });

  test("groups memberOf (in at least one), notMemberOf (in none), both", () => {
    expect(ids({ filters: [{ type: "groups", memberOf: ["g-night", "g-lab"] }] })).toEqual(["h-dan", "h-cat", "h-bob"]);
    expect(ids({ filters: [{ type: "groups", notMemberOf: ["g-night"] }] })).toEqual(["h-dan", "h-ann", "h-eve"]);
    expect(ids({ filters: [{ type: "groups", memberOf: ["g-day"], notMemberOf: ["g-night"] }] })).toEqual(["h-ann"]);
  });

  test("partition memberOf / notMemberOf, and the body's partition", () => {
    expect(ids({ filters: [{ type: "partition", memberOf: ["p-lab"] }] })).toEqual(["h-dan", "h-eve"]);
    expect(ids({ filters: [{ type: "partition", notMemberOf: ["p-lab"] }] })).toEqual(["h-cat", "h-ann", "h-bob"]);
    expect(ids({ partition: "p-lab" })).toEqual(["h-dan", "h-eve"]);
  });

  test("credentials cardNumber equals (holds that card) / does not equal (holds none)", () => {
    expect(ids({ filters: [{ type: "credentials", cardNumber: { operator: "equals", operand: 10050 } }] })).toEqual([
      "h-ann",
    ]);
    expect(
      ids({ filters: [{ type: "credentials", cardNumber: { operator: "does not equal", operand: 10050 } }] }),
    ).toEqual(["h-dan", "h-cat", "h-bob", "h-eve"]);
    // a digital credential's number is not a card number
    expect(ids({ filters: [{ type: "credentials", cardNumber: { operator: "equals", operand: 777001 } }] })).toEqual(
      [],
    );
  });

  test("credentials mobile: touch/token, accepted (number set) / pending", () => {
    const m = (type: string, status: string) => ids({ filters: [{ type: "credentials", mobile: { type, status } }] });
    expect(m("touch", "accepted")).toEqual(["h-cat", "h-ann"]);
    expect(m("touch", "pending")).toEqual(["h-eve"]);
    expect(m("token", "accepted")).toEqual(["h-cat"]);
    expect(m("token", "pending")).toEqual(["h-bob"]);
  });

  test('all filters must hold: "everyone with a card 10000–10100 who is not in Night" as two reports\' worth of filters', () => {
    const inRange = [10000, 10050, 10100].flatMap((n) =>
      ids({
        filters: [
          { type: "credentials", cardNumber: { operator: "equals", operand: n } },
          { type: "groups", notMemberOf: ["g-night"] },
        ],
      }),
    );
    expect(inRange).toEqual(["h-ann", "h-ann"]);
    // "who has a PIN but no card": the audit of the issue
    expect(
      ids({
        filters: [
          { type: "credentials", cardNumber: { operator: "does not equal", operand: 10000 } },
          { type: "credentials", mobile: { type: "touch", status: "accepted" } },
        ],
      }),
    ).toEqual(["h-cat"]);
  });
});

describe("refusals: every problem, with its path", () => {
  test("not an object", () => {
    expect(issues([])).toEqual([{ path: "", code: "invalidType" }]);
  });
  test("RP1: unknown body field, unknown filter type, missing type", () => {
    expect(issues({ filter: [], filters: [{ type: "pin" }, { operator: "equals" }] })).toEqual([
      { path: "filter", code: "unrecognizedKeys" },
      { path: "filters.0.type", code: "invalidValue" },
      { path: "filters.1.type", code: "required" },
    ]);
  });
  test("operator without operand, operand without operator, unknown operator, caseSensitive not boolean", () => {
    expect(
      issues({
        filters: [
          { type: "firstName", operator: "equals" },
          { type: "lastName", operand: "x" },
          { type: "email", operator: "starts with", operand: "x", caseSensitive: "yes" },
        ],
      }),
    ).toEqual([
      { path: "filters.0.operand", code: "required" },
      { path: "filters.1.operator", code: "required" },
      { path: "filters.2.operator", code: "invalidValue" },
      { path: "filters.2.caseSensitive", code: "invalidType" },
    ]);
  });
  test("enabled without value; a field of another filter type (RP1)", () => {
    expect(issues({ filters: [{ type: "enabled" }, { type: "enabled", value: true, operand: "x" }] })).toEqual([
      { path: "filters.0.value", code: "required" },
      { path: "filters.1.operand", code: "unrecognizedKeys" },
    ]);
  });
  test("groups and partition: neither list, an empty list, unknown ids", () => {
    expect(
      issues({
        filters: [
          { type: "groups" },
          { type: "groups", memberOf: [] },
          { type: "partition", notMemberOf: ["p-main", "p-nope", 3] },
        ],
      }),
    ).toEqual([
      { path: "filters.0", code: "required" },
      { path: "filters.1.memberOf", code: "invalidType" },
      { path: "filters.2.notMemberOf.1", code: "unknownReference" },
      { path: "filters.2.notMemberOf.2", code: "invalidType" },
    ]);
  });
  test("credentials: neither cardNumber nor mobile; cardNumber without operand; bad mobile", () => {
    expect(
      issues({
        filters: [
          { type: "credentials" },
          { type: "credentials", cardNumber: { operator: "equals" } },
          { type: "credentials", cardNumber: { operator: "contains", operand: -1 }, mobile: { type: "nfc" } },
        ],
      }),
    ).toEqual([
      { path: "filters.0", code: "required" },
      { path: "filters.1.cardNumber.operand", code: "required" },
      { path: "filters.2.cardNumber.operator", code: "invalidValue" },
      { path: "filters.2.cardNumber.operand", code: "invalidType" },
      { path: "filters.2.mobile.type", code: "invalidValue" },
      { path: "filters.2.mobile.status", code: "required" },
    ]);
  });
  test("reportId with other fields: each other field is named", () => {
    expect(issues({ reportId: "r-1", filters: [], output: ["id"] })).toEqual([
      { path: "filters", code: "invalid" },
      { path: "output", code: "invalid" },
    ]);
  });
  test("reportId: unknown without a template lookup; a known template stands for its body", () => {
    expect(issues({ reportId: "r-1" })).toEqual([{ path: "reportId", code: "unknownReference" }]);
    const templates = (id: string | number) =>
      id === "t-night" ? { filters: [{ type: "groups", memberOf: ["g-night"] }], output: ["id"] } : undefined;
    expect(holderReport(snap, { reportId: "t-night" }, { templates })).toEqual({
      ok: true,
      value: [{ id: "h-cat" }, { id: "h-bob" }],
    });
  });
  test("RP8: output: unknown, duplicate, empty; partition unknown", () => {
    expect(issues({ output: ["id", "ID", "id"], partition: "p-x" })).toEqual([
      { path: "partition", code: "unknownReference" },
      { path: "output.1", code: "invalidValue" },
      { path: "output.2", code: "duplicateName" },
    ]);
    expect(issues({ output: [] })).toEqual([{ path: "output", code: "tooSmall" }]);
  });
  test("every refusal is a sentence", () => {
    const r = holderReport(snap, { filters: [{ type: "firstName", operator: "equals" }] });
    expect(!r.ok && r.issues[0]!.message).toBe("Is required with an operator: the text to compare.");
  });
});

describe("1.0 people reports (seed 002)", () => {
  const panel = loadPanelEngineOrThrow(smallPanel());
  test("display-name keys in seed order, integer ids, custom fields as JSON", () => {
    const r = peopleReport(panel, {});
    expect(r.ok && r.value[0]).toEqual({
      id: 1,
      "First Name": "Ann",
      "Last Name": "Lee",
      Cards: "1001",
      Groups: "Staff",
      Email: null,
      Enabled: true,
      Pin: "2468",
      "Duress Pin": null,
      Partition: "Main",
      "Active Date": null,
      "Expire Date": null,
      "Mobile App": 0,
      "Pending Mobile App": 0,
      Bluetooth: 0,
      "Pending Bluetooth": 1 - 1,
      "Custom Fields": '{"badge":"B-1"}',
    });
  });
  test("dates are ISO 8601 with the node's offset at that wall time (RP6: summer and winter in Paris)", () => {
    const input = smallPanel();
    input.persons[0].activeDate = "2026-01-10T09:00:00";
    input.persons[0].expireDate = "2026-07-10T18:30:00";
    const r = peopleReport(loadPanelEngineOrThrow(input), {
      output: ["Active Date", "Expire Date"],
      filters: [{ type: "firstName", operator: "equals", operand: "Ann" }],
    });
    expect(r.ok && r.value).toEqual([
      { "Active Date": "2026-01-10T09:00:00+01:00", "Expire Date": "2026-07-10T18:30:00+02:00" },
    ]);
  });
  test('output names custom fields "Custom Attributes"; filters take integer ids', () => {
    const r = peopleReport(panel, {
      output: ["id", "Custom Attributes"],
      filters: [{ type: "groups", memberOf: [2] }],
    });
    expect(r.ok ? r.value : r.issues).toEqual([{ id: 2, "Custom Fields": "{}" }]);
    const bad = peopleReport(panel, {
      output: ["Custom Fields"],
      filters: [{ type: "groups", memberOf: ["2"] }],
      reportId: undefined,
    });
    expect(!bad.ok && bad.issues.map((i) => i.path.join("."))).toEqual(["filters.0.memberOf.0", "output.0"]);
  });
});

describe("exports", () => {
  const all = holderReport(snap, {});
  const records = all.ok ? all.value : [];
  const columns = [...HOLDER_PROPERTIES];

  test("RP7: CSV: a header row of the output names, CRLF rows, and it parses back to the records (RFC 4180 quoting of commas and quotes)", () => {
    const csv = toCsv(records, columns);
    expect(csv.split("\r\n")[0]).toBe(columns.join(","));
    expect(csv.endsWith("\r\n")).toBe(true);
    const back = parse(csv, { columns: true }) as Record<string, string>[];
    expect(back.map((r) => r.id)).toEqual(records.map((r) => r.id));
    expect(back.find((r) => r.id === "h-eve")!.email).toBe('eve, "the" tester');
    expect(back.find((r) => r.id === "h-ann")!.cards).toBe("10000, 10050");
    expect(back.find((r) => r.id === "h-ann")!.customFields).toBe('{"badge":"B-1"}');
  });

  test("CSV: a cell starting with =, +, -, @ is neutralised with a leading apostrophe (RP7)", () => {
    const back = parse(toCsv(records, columns), { columns: true }) as Record<string, string>[];
    const dan = back.find((r) => r.id === "h-dan")!;
    expect(dan.lastName).toBe('\'=HYPERLINK("http://evil","x")');
    expect(dan.email).toBe("'@dan");
    const more = toCsv([{ a: "+1", b: "-2", c: "ok", d: 5, e: null, f: true }], ["a", "b", "c", "d", "e", "f"]);
    expect(parse(more, { columns: true })).toEqual([{ a: "'+1", b: "'-2", c: "ok", d: "5", e: "", f: "true" }]);
  });

  test("JSON: the records as they are", () => {
    expect(JSON.parse(toJson(records))).toEqual(records);
  });

  test("RP7: HTML: one standalone page whose holder text is all escaped; a sortable table; print styles", () => {
    const html = toHtml(records, columns, { title: "Holders <all>" });
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("=HYPERLINK(&quot;http://evil&quot;,&quot;x&quot;)");
    expect(html).toContain("<title>Holders &lt;all&gt;</title>");
    expect(html).toContain("@media print");
    expect(html.match(/<tr>/g)!.length).toBe(records.length + 1);
    // the only script is the fixed sorting script, and it holds no holder text
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(1);
    for (const r of records)
      for (const v of Object.values(r)) if (typeof v === "string" && v.length > 3) expect(scripts[0]).not.toContain(v);
  });
});

describe("the HTML export reads as words (RP7)", () => {
  const all = holderReport(snap, {});
  const records = all.ok ? all.value : [];
  const html = toHtml(records, [...HOLDER_PROPERTIES]);

  test("RP7: headers are words with the API key as their tooltip; 1.0 display names stay as they are", () => {
    expect(html).toContain('<th scope="col" title="API key: firstName"><button type="button">First name</button></th>');
    expect(html).toContain('title="API key: duressPin"><button type="button">Duress PIN</button>');
    expect(html).toContain('title="API key: customFields"><button type="button">Custom fields</button>');
    expect(toHtml([], ["First Name", "Custom Fields"])).toContain(
      '<th scope="col" title="API key: First Name"><button type="button">First Name</button></th>',
    );
  });

  test("RP7: custom fields are a list of name: value, not JSON text; nested values are lists", () => {
    expect(html).toContain('<td><ul><li><span class="k">badge:</span> <span class="nw">B-1</span></li></ul></td>');
    expect(html).not.toContain("{&quot;badge");
    expect(toHtml([{ "Custom Fields": '{"a":[1,"x-y"],"b":{}}' }], ["Custom Fields"])).toContain(
      '<td><ul><li><span class="k">a:</span> <ul><li>1</li><li><span class="nw">x-y</span></li></ul></li><li><span class="k">b:</span> </li></ul></td>',
    );
    // Text that is not JSON stays text; so does JSON text in any other column.
    expect(toHtml([{ customFields: "{oops", lastName: '{"a":1}' }], ["customFields", "lastName"])).toContain(
      "<td>{oops</td><td>{&quot;a&quot;:1}</td>",
    );
  });

  test("RP7: lines break only at spaces: no CSS that breaks words; a word with a hyphen is kept whole", () => {
    expect(html).not.toMatch(/word-break:\s*break-(word|all)|overflow-wrap:\s*(anywhere|break-word)/);
    expect(html).toContain("overflow-wrap: normal; word-break: normal;");
    expect(html).toContain('<td class="nw">h-ann</td>');
    expect(toHtml([{ n: "Anne-Marie de la Cruz-Villanueva Ortiz" }], ["n"])).toContain(
      '<td><span class="nw">Anne-Marie</span> de la <span class="nw">Cruz-Villanueva</span> Ortiz</td>',
    );
  });
});

describe("RSOP reports (RP13)", () => {
  const engine = createEngine(parseSnapshotOrThrow(reportSystemInput()));
  const at = "2026-04-15T14:00:00Z"; // Wednesday 09:00 in Chicago

  test("one row per holder × device: allowed, the deciding rule and its name", () => {
    const r = rsopReport(engine, { at, holders: [{ type: "lastName", operator: "equals", operand: "Lee" }] });
    expect(r.ok && r.value).toEqual([
      {
        holderId: "h-ann",
        firstName: "Ann",
        lastName: "Lee",
        deviceId: "d-front",
        floorGroupId: null,
        deviceName: "Front door",
        cloudNode: "HQ",
        allowed: true,
        activeRuleId: "r-day",
        ruleName: "Day front",
      },
      {
        holderId: "h-bob",
        firstName: "Bob",
        lastName: "Lee",
        deviceId: "d-front",
        floorGroupId: null,
        deviceName: "Front door",
        cloudNode: "HQ",
        allowed: true,
        activeRuleId: "r-day",
        ruleName: "Day front",
      },
      {
        holderId: "h-bob",
        firstName: "Bob",
        lastName: "Lee",
        deviceId: "d-lab",
        floorGroupId: null,
        deviceName: "Lab door",
        cloudNode: "HQ",
        allowed: false,
        activeRuleId: "r-night-deny",
        ruleName: "Night lab deny",
      },
    ]);
  });

  test("devices narrows the rows; a rule without a name has a null ruleName", () => {
    const r = rsopReport(engine, { at, devices: ["d-lab"] });
    expect(r.ok && r.value.map((x) => [x.holderId, x.allowed, x.activeRuleId, x.ruleName])).toEqual([
      ["h-dan", true, "r-lab", null],
      ["h-cat", false, null, null], // disabled: no rule decides
      ["h-bob", false, "r-night-deny", "Night lab deny"],
    ]);
  });

  test("refusals: bad filters at holders[i], unknown devices, a bad instant", () => {
    const r = rsopReport(engine, { at, holders: [{ type: "nope" }], devices: ["d-x"] });
    expect(!r.ok && r.issues.map((i) => [i.path.join("."), i.code])).toEqual([
      ["holders.0.type", "invalidValue"],
      ["devices.0", "unknownReference"],
    ]);
    const t = rsopReport(engine, { at: "yesterday" });
    expect(!t.ok && t.issues.map((i) => i.path.join("."))).toEqual(["at"]);
  });
});
