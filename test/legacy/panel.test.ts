import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { loadPanelEngineOrThrow } from "../../src/legacy1/panelEngine.js";
import { migratePanel, migratedId } from "../../src/legacy1/migration/migratePanel.js";
import { preflightBlocks, preflightPanel, preflightWarns } from "../../src/legacy1/migration/preflightPanel.js";
import { URL_NAMESPACE, uuidV5 } from "../../src/legacy1/migration/uuidV5.js";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import { parseSnapshot } from "../../src/model/index.js";
import { parsePanel } from "../../src/legacy1/index.js";

const read = (p: string) => JSON.parse(readFileSync(new URL(`../../examples/${p}`, import.meta.url), "utf8"));
const PANEL = read("panel.json");
const BUILDING = read("building.json");
const SYSTEM_ID = "0b6f8a52-3d1c-4f57-9a43-2c8e1f7d6a90";
const clone = () => structuredClone(PANEL);

describe("a 1.0 panel, evaluated directly", () => {
  const panel = loadPanelEngineOrThrow(PANEL);

  test("decisions carry door.request.* topics and integer ids", () => {
    // Scan 1 of the demo (a nurse at Ward 3), on the panel made from the Chicago node.
    const ward3 = PANEL.devices.find((d: { name: string }) => d.name === "Ward 3 (Medical)");
    const d = panel.decide({
      deviceId: ward3.id,
      at: "2026-04-15T09:15:00-05:00",
      credential: { credentialNumber: 10234, facilityCode: 17 },
    });
    expect(d).toMatchObject({ outcome: "allowed", topic: "door.request.allowed", reason: "allowed" });
    expect(typeof d.holderId).toBe("number");
    expect(typeof d.credentialId).toBe("number");
    expect(typeof d.activeRuleId).toBe("number");
    const rule = PANEL.rules.find((r: { id: number }) => r.id === d.activeRuleId);
    expect(rule.name).toBe("Nurses: wards and entrances, weekday day shift");
    expect(panel.decide({ deviceId: "not-an-integer", at: 0, pin: "1" })).toMatchObject({
      reason: "badRequest",
      topic: "door.request.denied",
    });
    expect(panel.decide({ deviceId: 99_999, at: 0, pin: "1" })).toMatchObject({ reason: "unknownDevice" });
  });

  test("every demo scan at a Chicago door decides as on the 2.0 building", () => {
    const building = loadEngineOrThrow(BUILDING);
    const byName = new Map(PANEL.devices.map((d: { name: string; id: number }) => [d.name, d.id]));
    const scans = readFileSync(new URL("../../examples/requests.jsonl", import.meta.url), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    let compared = 0;
    for (const scan of scans) {
      const dev = BUILDING.devices.find((d: { id: string }) => d.id === scan.deviceId);
      if (!byName.has(dev.name) || scan.credential?.mobile !== undefined) continue;
      const d2 = building.decide(scan);
      const d1 = panel.decide({ ...scan, deviceId: byName.get(dev.name) });
      expect({ scan: scan.note, outcome: d1.outcome, reason: d1.reason, duress: d1.duress }).toEqual({
        scan: scan.note,
        outcome: d2.outcome,
        reason: d2.reason,
        duress: d2.duress,
      });
      compared++;
    }
    expect(compared).toBeGreaterThan(12);
  });

  test("RSOP comes out in the seed 002 shape", () => {
    const r = panel.rsop([1], { at: "2026-04-15T14:15:00Z" });
    const person = r.persons[0]!;
    expect(Object.keys(person)).toEqual(["id", "enabled", "groups", "doors", "rules", "floorGroups"]);
    expect(person.doors).toHaveLength(10);
    expect(Object.keys(person.doors[0]!)).toEqual([
      "id",
      "activeRuleId",
      "allowed",
      "name",
      "created",
      "type",
      "publicIcon",
      "readerType",
      "securedReadsOnly",
      "supportBleCredentials",
      "readerSerialNumber",
    ]);
    expect(person.rules[0]).toMatchObject({
      type: "door",
      active: true,
      allow: true,
      startTime: "06:30",
      stopTime: "19:30",
    });
    expect(person.rules.find((x) => x.type === "elevator")).not.toHaveProperty("allow");
    expect(person.floorGroups[0]!.readerPort).toEqual({
      id: expect.any(Number),
      name: "Lift A car reader",
      type: "elevatorReader",
    });
    expect(() => panel.rsop([1, 424242], { at: 0 })).toThrow('Unknown person id "424242"');
  });

  test("problems are reported at their panel paths", () => {
    const p = clone();
    p.persons[0].firstName = "X".repeat(36);
    p.persons[1].credentials[0].credentialNumber = p.persons[2].credentials[0].credentialNumber;
    p.config.cardFormat.layout = "NOPE37";
    p.config.timezone = "Mars/Olympus";
    p.rules[0].startTime = "25:00";
    p.devices[0].connection = 77;
    p.groups[0].metadata = { blob: "x".repeat(11 * 1024) };
    const r = parsePanel(p);
    expect(r.ok).toBe(false);
    const paths = r.ok ? [] : r.issues.map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["rules.0.startTime", "groups.0.metadata"]));
    // The 1.0 shape checks come first; once they pass, the 2.0 checks report at 1.0 paths too.
    const q = clone();
    q.persons[0].firstName = "X".repeat(36);
    q.persons[1].credentials[0].credentialNumber = q.persons[2].credentials[0].credentialNumber;
    q.config.cardFormat.layout = "NOPE37";
    q.config.timezone = "Mars/Olympus";
    q.devices[0].connection = 77;
    const s = parsePanel(q);
    expect(s.ok ? [] : s.issues.map((i) => i.path.join("."))).toEqual(
      expect.arrayContaining([
        "persons.0.firstName",
        "persons.2.credentials.0.credentialNumber",
        "config.cardFormat.layout",
        "config.timezone",
        "devices.0.connection",
      ]),
    );
    // The duplicate number is reported where it repeats; the zone once, though system and node share it.
    expect(s.ok ? 0 : s.issues.filter((i) => i.path.join(".") === "config.timezone").length).toBe(1);
  });
});

describe("migration", () => {
  test("UUID v5 matches the RFC 9562 example", () => {
    expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com")).toBe(
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
    expect(uuidV5(URL_NAMESPACE, "x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test("migrating the same panel twice gives byte-identical JSON", () => {
    const a = migratePanel(clone(), { systemId: SYSTEM_ID });
    const b = migratePanel(clone(), { systemId: SYSTEM_ID });
    expect(a.ok && b.ok).toBe(true);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const other = migratePanel(clone(), { systemId: "another-system" });
    expect(other.ok && a.ok && other.value.cloudNodeId !== a.value.cloudNodeId).toBe(true);
  });

  test("mapping records: one per entity, seed fields, every mapped type the panel has, ids predictable", () => {
    const m = migratePanel(clone(), { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error("refused");
    const { mappings, snapshot } = m.value;
    const count = (t: string) => mappings.filter((r) => r.type === t).length;
    expect(count("holder")).toBe(PANEL.persons.length);
    expect(count("device")).toBe(PANEL.devices.length);
    expect(count("rule")).toBe(PANEL.rules.length);
    expect(count("credential")).toBe(
      PANEL.persons.reduce((n: number, p: { credentials: unknown[] }) => n + p.credentials.length, 0),
    );
    expect(new Set(mappings.map((r) => r.type))).toEqual(
      new Set([
        "cardFormat",
        "connection",
        "credential",
        "device",
        "floorGroup",
        "group",
        "holder",
        "partition",
        "rule",
      ]),
    );
    expect(Object.keys(mappings[0]!)).toEqual(["id", "legacyId", "serialNumber", "type", "systemId"]);
    expect(mappings.every((r) => r.serialNumber === PANEL.serialNumber && r.systemId === SYSTEM_ID)).toBe(true);
    expect(mappings.find((r) => r.type === "holder" && r.legacyId === 7)!.id).toBe(migratedId(SYSTEM_ID, "holder", 7));
    // Attributes became custom fields; person values came along.
    expect((snapshot as unknown as { customFields: unknown[] }).customFields).toHaveLength(PANEL.attributes.length);
    expect((snapshot.holders as { customFields: Record<string, unknown> }[])[0]!.customFields).toEqual(
      PANEL.persons[0].customAttributes,
    );
    // What 2.0 cannot hold is reported, not silently dropped.
    expect(m.value.dropped).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "holder", field: "metadata" }),
        expect.objectContaining({ type: "cloudNode", field: "config.logPurgeDays" }),
      ]),
    );
  });

  test("S13 migrated connections pass the 2.0 connection rules, with the ethernet defaults and the request spelling macaddress mapped", () => {
    const panel = clone();
    panel.connections.push(
      { id: 90, name: "Old controller", type: "ethernet", ipaddress: "10.20.9.1", port: 4050 },
      { id: 91, name: "Lock hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:91" },
      { id: 92, name: "Gateway", type: "wirelessGateway", ipaddress: "10.20.9.2", port: 4051 },
    );
    const m = migratePanel(panel, { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error(JSON.stringify(m.issues));
    const loaded = parseSnapshot(m.value.snapshot);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
    const byId = (legacy: number) =>
      loaded.value.connections.find((c) => c.id === migratedId(SYSTEM_ID, "connection", legacy))!;
    expect(byId(90)).toMatchObject({ type: "ethernet", protocol: "IPv6", manufacturer: "VENDOR_B" });
    expect(byId(91)).toMatchObject({ type: "lockhub", macAddress: "00:1B:2C:4A:11:91", port: null });
    expect(byId(92).manufacturer).toBeUndefined();
    // Every connection of the example panel keeps what it states.
    for (const c of PANEL.connections as { id: number; type: string; manufacturer?: string }[])
      if (c.manufacturer !== undefined) expect(byId(c.id).manufacturer).toBe(c.manufacturer);
    // A panel connection that breaks a 2.0 rule is refused before migration, at its panel path.
    const bad = clone();
    bad.connections.push({ id: 93, name: "Hub", type: "lockhub" });
    const refused = migratePanel(bad, { systemId: SYSTEM_ID });
    expect(refused.ok).toBe(false);
    expect(refused.ok ? [] : refused.issues.map((i) => i.path.join("."))).toContain(
      `connections.${PANEL.connections.length}.macAddress`,
    );
  });

  test("M5 attributes become custom fields of their partition; a regex gets the description 2.0 requires; a panel's values are checked as 2.0's", () => {
    const panel = clone();
    panel.attributes.push(
      { id: "desk", type: "string", regex: "^D[0-9]+$", partition: 0 },
      { id: "codes", type: "array", items: { type: "string", regex: "^[A-Z]$" }, partition: 0 },
    );
    panel.persons[0].customAttributes.desk = "D12";
    const m = migratePanel(panel, { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error("refused");
    const fields = (m.value.snapshot as unknown as { customFields: Record<string, unknown>[] }).customFields;
    const partition0 = migratedId(SYSTEM_ID, "partition", 0);
    expect(fields.filter((f) => f.partition === partition0).map((f) => f.id)).toEqual([
      "badgeColour",
      "employeeNumber",
      "desk",
      "codes",
    ]);
    expect(fields.find((f) => f.id === "desk")).toMatchObject({
      regex: "^D[0-9]+$",
      description: "Must match ^D[0-9]+$.",
      partition: partition0,
    });
    expect(fields.find((f) => f.id === "codes")!.items).toEqual({
      type: "string",
      regex: "^[A-Z]$",
      description: "Must match ^[A-Z]$.",
    });
    expect(loadEngineOrThrow(m.value.snapshot).snapshot.customFields).toHaveLength(fields.length);
    // A value that does not fit its attribute refuses the panel, at the panel path.
    panel.persons[0].customAttributes.desk = "X";
    const bad = parsePanel(panel);
    expect(bad.ok ? [] : bad.issues.map((i) => [i.path.join("."), i.code])).toEqual([
      ["persons.0.customAttributes.desk", "invalidValue"],
    ]);
    panel.persons[0].customAttributes.desk = "D1";
    panel.attributes.push({ id: "desk", type: "boolean", partition: 0 });
    const twice = parsePanel(panel);
    expect(twice.ok ? [] : twice.issues.map((i) => [i.path.join("."), i.code])).toEqual([
      [`attributes.${panel.attributes.length - 1}.id`, "duplicateId"],
    ]);
  });

  test("every mapping record names an entity of its type in the migrated snapshot", () => {
    const m = migratePanel(clone(), { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error("refused");
    const snap = m.value.snapshot as unknown as Record<
      string,
      { id: string; credentials?: { id: string }[]; cardFormat?: { id: string }[] }[]
    >;
    const ids: Record<string, string[]> = {
      cardFormat: snap.cloudNodes!.flatMap((n) => (n.cardFormat ?? []).map((f) => f.id)),
      connection: snap.connections!.map((x) => x.id),
      credential: snap.holders!.flatMap((h) => (h.credentials ?? []).map((c) => c.id)),
      device: snap.devices!.map((x) => x.id),
      floorGroup: snap.floorGroups!.map((x) => x.id),
      group: snap.groups!.map((x) => x.id),
      holder: snap.holders!.map((x) => x.id),
      partition: snap.partitions!.map((x) => x.id),
      rule: snap.rules!.map((x) => x.id),
    };
    const missing = m.value.mappings.filter((r) => !(ids[r.type] ?? []).includes(r.id));
    expect(missing).toEqual([]);
    // …and each migrated entity has its record.
    const mapped = new Set(m.value.mappings.map((r) => `${r.type}:${r.id}`));
    expect(
      Object.entries(ids).flatMap(([t, list]) => list.filter((x) => !mapped.has(`${t}:${x}`)).map((x) => `${t}:${x}`)),
    ).toEqual([]);
  });

  test("M7 the card format gets its mapped UUID and a layout that decodes as before: well-known name, custom object, or raw", () => {
    const formatOf = (cardFormat: unknown) => {
      const p = clone();
      p.config.cardFormat = cardFormat;
      const m = migratePanel(p, { systemId: SYSTEM_ID });
      if (!m.ok) throw new Error(`refused: ${JSON.stringify(m.issues)}`);
      const node = (m.value.snapshot.cloudNodes as { cardFormat: Record<string, unknown>[] }[])[0]!;
      expect(node.cardFormat).toHaveLength(1);
      expect(node.cardFormat[0]!.id).toBe(migratedId(SYSTEM_ID, "cardFormat", 0));
      expect(m.value.mappings.filter((r) => r.type === "cardFormat")).toEqual([
        {
          id: migratedId(SYSTEM_ID, "cardFormat", 0),
          legacyId: 0,
          serialNumber: PANEL.serialNumber,
          type: "cardFormat",
          systemId: SYSTEM_ID,
        },
      ]);
      return node.cardFormat[0]!;
    };
    // The example panel's H10301: the name moves to `layout`, the rest stays.
    expect(formatOf(PANEL.config.cardFormat)).toEqual({
      ...PANEL.config.cardFormat,
      id: migratedId(SYSTEM_ID, "cardFormat", 0),
      layout: "H10301",
    });
    // A legacy id outside the table without a layout stays raw (no layout); the id is kept as the description.
    expect(formatOf({ id: "NOPE37", min_input_bits: 37, max_input_bits: 37 })).toEqual({
      id: migratedId(SYSTEM_ID, "cardFormat", 0),
      description: "NOPE37",
      min_input_bits: 37,
      max_input_bits: 37,
    });
    // A custom layout object, and a layout string, are carried as they are.
    const custom = { cardNumber: { offset: 0, length: 12 }, facilityCode: { offset: 12, length: 4 } };
    expect(
      formatOf({ id: "site-16", description: "Site", min_input_bits: 16, max_input_bits: 16, layout: custom }),
    ).toEqual({
      id: migratedId(SYSTEM_ID, "cardFormat", 0),
      description: "Site",
      min_input_bits: 16,
      max_input_bits: 16,
      layout: custom,
    });
    expect(formatOf({ id: "lobby", min_input_bits: 34, max_input_bits: 34, layout: "H10306" })).toMatchObject({
      layout: "H10306",
      description: "lobby",
    });
    // No card format (the default H10301) maps nothing.
    const p = clone();
    p.config.cardFormat = null;
    const m = migratePanel(p, { systemId: SYSTEM_ID });
    expect(m.ok && m.value.mappings.filter((r) => r.type === "cardFormat")).toEqual([]);
  });

  test("M7 a raw legacy format decides alike before and after migration, through the mappings", () => {
    const p = clone();
    p.config.cardFormat = { id: "NOPE37", min_input_bits: 30, max_input_bits: 40, facility_code: "NOT_ENFORCED" };
    // A person's card enrolled under its whole-frame number.
    const person = p.persons.find((x: { credentials: unknown[] }) => x.credentials.length > 0);
    person.credentials[0].credentialNumber = 123_456_789;
    person.credentials[0].facilityCode = null;
    const m = migratePanel(p, { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error("refused");
    expect(m.preflight.extensions.warnings.unknownCardFormat).toBe("NOPE37");
    const before = loadPanelEngineOrThrow(p);
    const after = loadEngineOrThrow(m.value.snapshot);
    const id = new Map(m.value.mappings.map((r) => [`${r.type}:${r.legacyId}`, r.id]));
    let allowed = 0;
    for (const frame of [
      (123_456_789).toString(2).padStart(32, "0"),
      (123_456_789).toString(2).padStart(40, "0"),
      "1".repeat(31),
      "0".repeat(29),
    ])
      for (const device of p.devices as { id: number }[])
        for (const at of ["2026-04-15T14:15:00Z", "2026-04-18T03:00:00Z"]) {
          const d1 = before.decide({ deviceId: device.id, at, credential: { wiegand: frame } });
          const d2 = after.decide({ deviceId: id.get(`device:${device.id}`)!, at, credential: { wiegand: frame } });
          expect([d2.outcome, d2.reason, d2.credentialNumber, d2.facilityCode]).toEqual([
            d1.outcome,
            d1.reason,
            d1.credentialNumber,
            d1.facilityCode,
          ]);
          expect(d2.holderId).toBe(d1.holderId === null ? null : id.get(`holder:${d1.holderId}`));
          if (d1.outcome === "allowed") allowed++;
        }
    expect(allowed).toBeGreaterThan(0);
  });

  test("RSOP of every person equals before and after, through the mappings (example panel)", () => {
    const m = migratePanel(clone(), { systemId: SYSTEM_ID });
    if (!m.ok) throw new Error("refused");
    const before = loadPanelEngineOrThrow(PANEL);
    const after = loadEngineOrThrow(m.value.snapshot);
    const id = new Map(m.value.mappings.map((r) => [`${r.type}:${r.legacyId}`, r.id]));
    const persons = PANEL.persons.map((p: { id: number }) => p.id);
    for (const at of ["2026-04-15T14:15:00Z", "2026-04-18T10:59:59Z", "2026-11-01T06:30:00Z"]) {
      const r1 = before.rsop(persons, { at });
      const r2 = after.rsop(
        persons.map((p: number) => id.get(`holder:${p}`)!),
        { at, cloudNodeId: m.value.cloudNodeId },
      );
      r1.persons.forEach((p, i) => {
        const h = r2.holders[i]!;
        const doors = Object.fromEntries(p.doors.map((d) => [id.get(`device:${d.id}`), d.allowed]));
        expect(Object.fromEntries(h.devices.map((d) => [d.id, d.allowed]))).toEqual(doors);
        const fgs = Object.fromEntries(p.floorGroups.map((f) => [id.get(`floorGroup:${f.id}`), f.allowed]));
        expect(Object.fromEntries(h.floorGroups.map((f) => [f.id, f.allowed]))).toEqual(fgs);
        expect(Object.fromEntries(h.rules.map((r) => [r.id, r.active]))).toEqual(
          Object.fromEntries(p.rules.map((r) => [id.get(`rule:${r.id}`), r.active])),
        );
      });
    }
  });
});

describe("preflight", () => {
  test("seed 000's members, letter for letter, always present; ours under extensions; the example panel warns of what 2.0 drops, so ok is false but nothing blocks", () => {
    const p = preflightPanel(clone());
    expect(Object.keys(p)).toEqual(["ok", "warnings", "errors", "extensions"]);
    expect(Object.keys(p.warnings)).toEqual(["integrations"]);
    expect(Object.keys(p.errors)).toEqual([
      "softwareVersion",
      "integrations",
      "personalInfoMissing",
      "controllerOffline",
      "controllerVersion",
      "legacyDevice",
      "invalidDevice",
    ]);
    expect(p.errors).toEqual({
      softwareVersion: {},
      integrations: [],
      personalInfoMissing: false,
      controllerOffline: [],
      controllerVersion: [],
      legacyDevice: [],
      invalidDevice: [],
    });
    expect(Object.keys(p.extensions.errors)).toEqual(["duplicateNames", "invalidPanel"]);
    expect(Object.keys(p.extensions.warnings)).toEqual(["droppedFields", "unknownCardFormat"]);
    expect(p.extensions.warnings.droppedFields.length).toBeGreaterThan(0);
    expect([p.ok, preflightWarns(p), preflightBlocks(p)]).toEqual([false, true, false]);
    expect(migratePanel(clone(), { systemId: SYSTEM_ID }).ok, "warnings do not stop the one-shot migration").toBe(true);
    // With nothing to drop and nothing raw, ok is true.
    const clean = clone();
    const { panel } = { panel: clean };
    for (const list of [panel.persons, panel.groups, panel.devices]) for (const x of list) delete x.metadata;
    for (const d of panel.devices) {
      delete d.bootloaderVersion;
      delete d.startupVersion;
    }
    delete panel.config.logPurgeDays;
    const quiet = preflightPanel(panel);
    expect(quiet.extensions.warnings.droppedFields).toEqual([]);
    expect(quiet.ok).toBe(true);
  });

  test("a prop delay without a prop alarm is an invalid device and blocks migration", () => {
    const p = clone();
    p.devices[0].propDelay = 30;
    p.devices[0].propAlarm = false;
    const report = preflightPanel(p);
    expect(report.ok).toBe(false);
    expect(report.errors.invalidDevice).toEqual([
      expect.objectContaining({ id: p.devices[0].id, propDelay: 30, connection: p.devices[0].connection }),
    ]);
    const m = migratePanel(p, { systemId: SYSTEM_ID });
    expect(m.ok).toBe(false);
    // …while the panel itself still loads and decides (1.0 tolerates it).
    expect(parsePanel(p).ok).toBe(true);
  });

  test("M6 an unknown card-format id without a layout is a warning (frames are read raw), not an error", () => {
    const p = clone();
    p.config.cardFormat.id = "NOPE37";
    const report = preflightPanel(p);
    expect([report.ok, preflightBlocks(report)]).toEqual([false, false]);
    expect(report.extensions.warnings.unknownCardFormat).toBe("NOPE37");
    expect(report.errors).not.toHaveProperty("unknownCardFormat");
    expect(migratePanel(p, { systemId: SYSTEM_ID }).ok).toBe(true);
    // A well-known id, or any id with a layout, warns of nothing.
    expect(preflightPanel(clone()).extensions.warnings.unknownCardFormat).toBeNull();
    p.config.cardFormat.layout = "H10301";
    expect(preflightPanel(p).extensions.warnings.unknownCardFormat).toBeNull();
    // An unknown layout name keeps the panel from loading: an invalidPanel error at its path.
    p.config.cardFormat.layout = "NOPE37";
    const bad = preflightPanel(p);
    expect(bad.ok).toBe(false);
    expect(bad.extensions.errors.invalidPanel.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["unknownCardFormat", "config.cardFormat.layout"],
    ]);
    const m = migratePanel(p, { systemId: SYSTEM_ID });
    expect(m.ok ? [] : m.issues.map((i) => i.path.join("."))).toEqual(["config.cardFormat.layout"]);
  });

  test("duplicate partition names and a missing name are reported", () => {
    const p = clone();
    p.partitions.push({ id: 9, name: p.partitions[0].name });
    p.persons[3].lastName = "";
    const report = preflightPanel(p);
    expect(report.ok).toBe(false);
    expect(report.extensions.errors.duplicateNames).toEqual([
      { type: "partition", name: p.partitions[0].name, legacyIds: [0, 9] },
    ]);
    expect(report.errors.personalInfoMissing).toBe(true);
  });
});
