// Seed 001 §4 "Cloud nodes", "Connections", "Devices": statuses, required fields per type, the
// seed defaults and limits, uniqueness (device names, ports), and the delete conflicts.
import { describe, expect, test } from "vitest";
import { encodeWiegand } from "../../src/model/index.js";
import { AT, NOW, accept, liveOf, read, refuse, scan } from "./fixture.js";

const H10301 = {
  id: "H10301",
  description: "HID H10301 standard 26-bit",
  min_input_bits: 26,
  max_input_bits: 26,
  facility_code: "ENFORCED",
  allowed_facility_codes: [],
  enforce_parity: true,
  layout: null,
};

/** A 26-bit H10301 frame for facility code `fc` and number `n`, with correct parity. */
function h10301(fc: number, n: number): string {
  const mid = fc.toString(2).padStart(8, "0") + n.toString(2).padStart(16, "0");
  const ones = (s: string) => [...s].filter((c) => c === "1").length;
  const even = ones(mid.slice(0, 12)) % 2 === 1 ? "1" : "0";
  const odd = ones(mid.slice(12)) % 2 === 0 ? "1" : "0";
  return even + mid + odd;
}

describe("cloud nodes", () => {
  test("POST 201 {id} with the seed defaults: killTimer 259200, offlinePolicy 0, locale en, system zone, 26-bit format", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/cloud-nodes", body: { name: "Garage" } }, 201);
    expect(read(live, `/cloud-nodes/${r.id}`).body).toEqual({
      id: r.id,
      name: "Garage",
      description: null,
      serialNumber: null,
      created: new Date(NOW).toISOString(),
      ecards: [],
      offlinePolicy: 0,
      killTimer: 259_200,
      timezone: "UTC",
      locale: "en",
      cardFormat: [H10301],
      threatLevel: 0,
    });
  });

  test("name is required; killTimer ≥ 300; offlinePolicy 0, 1 or 2; a known zone", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/cloud-nodes", body: {} }, 400).paths).toEqual(["body.name"]);
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "G", killTimer: 299 } }, 400).paths,
    ).toEqual(["body.killTimer"]);
    accept(live, { method: "POST", path: "/cloud-nodes", body: { name: "G", killTimer: 300 } }, 201);
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "G2", offlinePolicy: 3 } }, 400).paths,
    ).toEqual(["body.offlinePolicy"]);
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "G2", timezone: "Mars/Olympus" } }, 400).paths,
    ).toEqual(["body.timezone"]);
  });

  test("card formats: a well-known id reads its own length; bits 9…512; FILTER_LIST needs codes; id and bits required", () => {
    const live = liveOf();
    const node = (f: object) => ({
      method: "POST" as const,
      path: "/cloud-nodes",
      body: { name: "Fmt", cardFormat: [f] },
    });
    const r = accept(live, node({ id: "H10301", min_input_bits: 26, max_input_bits: 26 }), 201);
    expect(read(live, `/cloud-nodes/${r.id}`).body.cardFormat).toEqual([{ ...H10301, description: null }]);
    expect(refuse(live, node({ id: "H10301", min_input_bits: 26, max_input_bits: 37 }), 400).paths).toEqual([
      "body.cardFormat.0.max_input_bits",
    ]);
    expect(
      refuse(
        live,
        node({ id: "X", min_input_bits: 8, max_input_bits: 26, layout: { cardNumber: { offset: 0, length: 8 } } }),
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.min_input_bits"]);
    expect(
      refuse(
        live,
        node({ id: "X", min_input_bits: 26, max_input_bits: 513, layout: { cardNumber: { offset: 0, length: 8 } } }),
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.max_input_bits"]);
    expect(refuse(live, node({ id: "H10301", max_input_bits: 26 }), 400).paths).toEqual([
      "body.cardFormat.0.min_input_bits",
    ]);
    expect(refuse(live, node({ min_input_bits: 26, max_input_bits: 26 }), 400).paths).toEqual(["body.cardFormat.0.id"]);
    expect(
      refuse(live, node({ id: "H10301", min_input_bits: 26, max_input_bits: 26, facility_code: "FILTER_LIST" }), 400)
        .paths,
    ).toEqual(["body.cardFormat.0.allowed_facility_codes"]);
    // SPEC §5 (semantics S4): an unknown id without a layout is a raw format (whole frame = card number).
    const raw = accept(live, node({ id: "NoSuchFormat", min_input_bits: 26, max_input_bits: 26 }), 201);
    expect(read(live, `/cloud-nodes/${raw.id}`).body.cardFormat).toEqual([
      { ...H10301, id: "NoSuchFormat", description: null },
    ]);
  });

  /** Ann's card (1001, facility code 10) scanned as `frame` at the front door of n-main. */
  const readAt = (live: ReturnType<typeof liveOf>, frame: string) => {
    const d = live.engine.decide({ deviceId: "d-front", at: AT, credential: { wiegand: frame } });
    return {
      outcome: d.outcome,
      reason: d.reason,
      holderId: d.holderId,
      facilityCode: d.facilityCode,
      credentialNumber: d.credentialNumber,
    };
  };
  const putFormats = (cardFormat: object[]) => ({
    method: "PUT" as const,
    path: "/cloud-nodes/n-main",
    body: { name: "Main Gateway", cardFormat },
  });
  const ANN_IN = { outcome: "allowed", reason: "allowed", holderId: "h-ann", facilityCode: 10, credentialNumber: 1001 };

  test("card formats: a layout string names a well-known layout whatever the id, and takes that layout's length", () => {
    const live = liveOf();
    accept(live, putFormats([{ id: "lobby-readers", min_input_bits: 34, max_input_bits: 34, layout: "H10306" }]), 204);
    expect(read(live, "/cloud-nodes/n-main").body.cardFormat[0]).toMatchObject({
      id: "lobby-readers",
      layout: "H10306",
    });
    expect(readAt(live, encodeWiegand("H10306", { facilityCode: 10, cardNumber: 1001 }))).toEqual(ANN_IN);
    expect(readAt(live, h10301(10, 1001)).reason).toBe("unknownCardFormat");
    // The layout, not the id, sets the length: "H10301" as the id reads 34-bit frames here.
    accept(live, putFormats([{ id: "H10301", min_input_bits: 34, max_input_bits: 34, layout: "H10306" }]), 204);
    expect(readAt(live, encodeWiegand("H10306", { facilityCode: 10, cardNumber: 1001 }))).toEqual(ANN_IN);
    expect(
      refuse(live, putFormats([{ id: "lobby-readers", min_input_bits: 26, max_input_bits: 26, layout: "H10306" }]), 400)
        .paths,
    ).toEqual(["body.cardFormat.0.min_input_bits", "body.cardFormat.0.max_input_bits"]);
    // The same check guards a create.
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/cloud-nodes",
          body: { name: "New", cardFormat: [{ id: "x", min_input_bits: 35, max_input_bits: 36, layout: "C1k35s" }] },
        },
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.max_input_bits"]);
  });

  test("card formats: an unknown layout name is refused at body.cardFormat.0.layout, naming the known layouts", () => {
    const live = liveOf();
    const { paths, issues } = refuse(
      live,
      putFormats([{ id: "lobby-readers", min_input_bits: 34, max_input_bits: 34, layout: "H10036" }]),
      400,
    );
    expect(paths).toEqual(["body.cardFormat.0.layout"]);
    expect(issues[0]!.code).toBe("unknownCardFormat");
    expect(issues[0]!.message).toMatch(
      /^"H10036" is not a well-known layout\. Known layouts: H10301, .*H10306.*; for any other frame give a layout object\.$/,
    );
    expect(
      refuse(
        live,
        {
          method: "POST",
          path: "/cloud-nodes",
          body: { name: "New", cardFormat: [{ id: "x", min_input_bits: 26, max_input_bits: 26, layout: 26 }] },
        },
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.layout"]);
    // Nothing changed: the node still reads the standard format.
    expect(readAt(live, h10301(10, 1001))).toEqual(ANN_IN);
  });

  test("card formats: a raw format (unknown id, no layout) reads the whole frame as the card number", () => {
    const live = liveOf();
    accept(
      live,
      putFormats([{ id: "site-raw", min_input_bits: 26, max_input_bits: 40, facility_code: "NOT_ENFORCED" }]),
      204,
    );
    expect(read(live, "/cloud-nodes/n-main").body.cardFormat[0]).toMatchObject({ id: "site-raw", layout: null });
    const raw = (n: number, bits: number) => n.toString(2).padStart(bits, "0");
    expect(readAt(live, raw(1001, 26))).toEqual({ ...ANN_IN, facilityCode: null });
    expect(readAt(live, raw(1001, 40))).toEqual({ ...ANN_IN, facilityCode: null });
    // An H10301 frame of Ann's card is read whole: another number; no parity to check.
    expect(readAt(live, h10301(10, 1001))).toMatchObject({
      reason: "unknownCredential",
      credentialNumber: parseInt(h10301(10, 1001), 2),
    });
    // ENFORCED (the default) matches a card enrolled without a facility code (semantics S17).
    accept(live, putFormats([{ id: "site-raw", min_input_bits: 26, max_input_bits: 40 }]), 204);
    expect(readAt(live, raw(1001, 26))).toMatchObject({ outcome: "unknown", reason: "facilityCodeMismatch" });
    accept(
      live,
      { method: "POST", path: "/holders/h-ann/credentials", body: { types: ["card"], credentialNumber: 777_777 } },
      201,
    );
    expect(readAt(live, raw(777_777, 32))).toEqual({ ...ANN_IN, facilityCode: null, credentialNumber: 777_777 });
  });

  test("card formats: an old-style entry (well-known id, no layout) decodes by its id", () => {
    const live = liveOf();
    accept(
      live,
      putFormats([
        { id: "H10306", min_input_bits: 34, max_input_bits: 34 },
        { id: "H10301", min_input_bits: 26, max_input_bits: 26 },
      ]),
      204,
    );
    expect(read(live, "/cloud-nodes/n-main").body.cardFormat.map((f: { layout: unknown }) => f.layout)).toEqual([
      null,
      null,
    ]);
    expect(readAt(live, encodeWiegand("H10306", { facilityCode: 10, cardNumber: 1001 }))).toEqual(ANN_IN);
    expect(readAt(live, h10301(10, 1001))).toEqual(ANN_IN);
    expect(refuse(live, putFormats([{ id: "H10306", min_input_bits: 26, max_input_bits: 26 }]), 400).paths).toEqual([
      "body.cardFormat.0.min_input_bits",
      "body.cardFormat.0.max_input_bits",
    ]);
  });

  test("card formats: a custom layout object is stored and decodes raw frames at that node", () => {
    const live = liveOf();
    // 12-bit number at 0, 4-bit facility code at 12, no parity: 16-bit frames.
    const custom = {
      id: "site-16",
      description: "Site 16-bit",
      min_input_bits: 16,
      max_input_bits: 16,
      enforce_parity: false,
      layout: { cardNumber: { offset: 0, length: 12 }, facilityCode: { offset: 12, length: 4 } },
    };
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main",
        body: { name: "Main Gateway", cardFormat: [custom, { id: "H10301", min_input_bits: 26, max_input_bits: 26 }] },
      },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main").body.cardFormat[0]).toMatchObject({
      id: "site-16",
      layout: { cardNumber: { offset: 0, length: 12 }, facilityCode: { offset: 12, length: 4 }, parity: [] },
    });
    // Ann: number 1001 (0b001111101001), facility code 10 (0b1010)
    const frame = (1001).toString(2).padStart(12, "0") + (10).toString(2).padStart(4, "0");
    const d = live.engine.decide({ deviceId: "d-front", at: AT, credential: { wiegand: frame } });
    expect({
      outcome: d.outcome,
      holderId: d.holderId,
      credentialNumber: d.credentialNumber,
      facilityCode: d.facilityCode,
    }).toEqual({ outcome: "allowed", holderId: "h-ann", credentialNumber: 1001, facilityCode: 10 });
    expect(live.engine.decide({ deviceId: "d-front", at: AT, credential: { wiegand: h10301(10, 1001) } }).outcome).toBe(
      "allowed",
    );
    // a layout that does not fit its frame is refused with the entry's path
    const bad = { ...custom, layout: { cardNumber: { offset: 8, length: 12 } } };
    expect(
      refuse(
        live,
        { method: "PUT", path: "/cloud-nodes/n-main", body: { name: "Main Gateway", cardFormat: [bad] } },
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.layout.cardNumber"]);
  });

  test("card formats: a custom layout's fixed marker bits act like parity (SPEC §5)", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "POST",
        path: "/holders/h-ann/credentials",
        body: { types: ["card"], credentialNumber: 2000, facilityCode: 5 },
      },
      201,
    );
    // 12-bit number at 0, 3-bit facility code at 12, bit 15 always 1
    const layout = {
      cardNumber: { offset: 0, length: 12 },
      facilityCode: { offset: 12, length: 3 },
      fixed: [{ position: 15, value: 1 }],
    };
    const node = (enforce_parity: boolean) => ({
      method: "PUT" as const,
      path: "/cloud-nodes/n-main",
      body: {
        name: "Main Gateway",
        cardFormat: [{ id: "marked-16", min_input_bits: 16, max_input_bits: 16, enforce_parity, layout }],
      },
    });
    const frame = (marker: string) => (2000).toString(2).padStart(12, "0") + (5).toString(2).padStart(3, "0") + marker;
    const at = (marker: string) => {
      const d = live.engine.decide({ deviceId: "d-front", at: AT, credential: { wiegand: frame(marker) } });
      return `${d.outcome}/${d.reason}`;
    };
    accept(live, node(true), 204);
    expect(read(live, "/cloud-nodes/n-main").body.cardFormat[0].layout.fixed).toEqual([{ position: 15, value: 1 }]);
    expect(at("1")).toBe("allowed/allowed");
    expect(at("0")).toBe("denied/parityError");
    accept(live, node(false), 204);
    expect(at("0")).toBe("allowed/allowed");
    // a marker bit must lie inside the frame and not overlap a field
    const outside = { ...layout, fixed: [{ position: 16, value: 1 }] };
    expect(
      refuse(
        live,
        {
          method: "PUT",
          path: "/cloud-nodes/n-main",
          body: { name: "M", cardFormat: [{ id: "m", min_input_bits: 16, max_input_bits: 16, layout: outside }] },
        },
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.layout.fixed.0.position"]);
    const overlap = { ...layout, fixed: [{ position: 3, value: 1 }] };
    expect(
      refuse(
        live,
        {
          method: "PUT",
          path: "/cloud-nodes/n-main",
          body: { name: "M", cardFormat: [{ id: "m", min_input_bits: 16, max_input_bits: 16, layout: overlap }] },
        },
        400,
      ).paths,
    ).toEqual(["body.cardFormat.0.layout.fixed.0.position"]);
  });

  test("ecards are card numbers (CN1: a safe integer or a canonical decimal string; else 400 at the entry); a PUT without locale, killTimer or offlinePolicy takes their defaults again", () => {
    const live = liveOf();
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "E", ecards: [12, "013", 1.5] } }, 400).paths,
    ).toEqual(["body.ecards.1", "body.ecards.2"]);
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "E", ecards: [-1] } }, 400).paths,
    ).toEqual(["body.ecards.0"]);
    expect(
      refuse(live, { method: "POST", path: "/cloud-nodes", body: { name: "E", killTimer: 600.5 } }, 400).paths,
    ).toEqual(["body.killTimer"]);
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-annex",
        body: { name: "Annex", locale: "fr", killTimer: 900, offlinePolicy: 1, ecards: [7] },
      },
      204,
    );
    accept(live, { method: "PUT", path: "/cloud-nodes/n-annex", body: { name: "Annex" } }, 204);
    expect(read(live, "/cloud-nodes/n-annex").body).toMatchObject({
      locale: "en",
      killTimer: 259_200,
      offlinePolicy: 0,
      ecards: [],
      timezone: "UTC",
    });
  });

  test("PUT takes the create body (name required) and keeps id and created; 204; unknown node → 404", () => {
    const live = liveOf();
    const created = read(live, "/cloud-nodes/n-annex").body.created;
    expect(refuse(live, { method: "PUT", path: "/cloud-nodes/n-annex", body: { killTimer: 600 } }, 400).paths).toEqual([
      "body.name",
    ]);
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-annex",
        body: {
          name: "Annex B",
          killTimer: 600,
          offlinePolicy: 2,
          timezone: "America/Chicago",
          locale: "fr",
          ecards: [99],
        },
      },
      204,
    );
    expect(read(live, "/cloud-nodes/n-annex").body).toMatchObject({
      id: "n-annex",
      name: "Annex B",
      killTimer: 600,
      offlinePolicy: 2,
      timezone: "America/Chicago",
      locale: "fr",
      ecards: [99],
      created,
    });
    refuse(live, { method: "PUT", path: "/cloud-nodes/n-nope", body: { name: "X" } }, 404);
  });

  test("offline e-cards: a node's ecards open its doors when offline past the kill timer", () => {
    const live = liveOf();
    accept(
      live,
      { method: "POST", path: "/holders/h-cy/credentials", body: { types: ["card"], credentialNumber: 9999 } },
      201,
    );
    const offline = () =>
      live.engine.decide({
        deviceId: "d-front",
        at: AT,
        credential: { credentialNumber: 9999 },
        node: { online: false, offlineSeconds: 600, timeKnown: true },
      });
    expect(offline().outcome).toBe("denied");
    accept(
      live,
      { method: "PUT", path: "/cloud-nodes/n-main", body: { name: "Main Gateway", killTimer: 300, ecards: [9999] } },
      204,
    );
    expect({ outcome: offline().outcome, reason: offline().reason }).toEqual({ outcome: "allowed", reason: "ecard" });
  });

  test("DELETE: a node with connections and devices → 409 naming each; an empty node → 204", () => {
    const live = liveOf();
    const r = refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main" }, 409);
    expect(r.paths).toEqual([
      "connections.0.cloudNode",
      "connections.1.cloudNode",
      "connections.2.cloudNode",
      ...[0, 1, 2, 3, 4, 5, 6].map((i) => `devices.${i}.cloudNode`),
    ]);
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-annex" }, 204);
    refuse(live, { method: "GET", path: "/cloud-nodes/n-annex" }, 404);
    refuse(live, { method: "DELETE", path: "/cloud-nodes/n-annex" }, 404);
  });
});

describe("connections", () => {
  const ETH = { name: "Ctl B", type: "ethernet", ipaddress: "10.1.1.1", port: 5000 };

  test("POST 200 {id}; ethernet defaults: protocol IPv6, manufacturer VENDOR_B", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/cloud-nodes/n-annex/connections", body: ETH }, 200);
    // Every field of the connection table, what the system does not know null (L23); the node is the path's.
    expect(read(live, `/cloud-nodes/n-annex/connections/${r.id}`).body).toEqual({
      id: r.id,
      connected: null,
      ipv6Address: null,
      dhcp: null,
      netmask: null,
      gateway: null,
      dns: null,
      macAddress: null,
      ...ETH,
      protocol: "IPv6",
      manufacturer: "VENDOR_B",
    });
    expect(live.snapshot.connections.find((c) => c.id === r.id)!.cloudNode).toBe("n-annex");
    const v4 = accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-annex/connections",
        body: { ...ETH, name: "Ctl C", protocol: "IPv4", manufacturer: "VENDOR_A", ipv6Address: "fe80::1" },
      },
      200,
    );
    expect(read(live, `/cloud-nodes/n-annex/connections/${v4.id}`).body).toMatchObject({
      protocol: "IPv4",
      manufacturer: "VENDOR_A",
      ipv6Address: "fe80::1",
    });
  });

  test("required by type: name, type; ipaddress for ethernet and wirelessGateway; port unless lockhub; macaddress for lockhub", () => {
    const live = liveOf();
    const post = (body: object) => ({ method: "POST" as const, path: "/cloud-nodes/n-annex/connections", body });
    expect(refuse(live, post({}), 400).paths.sort()).toEqual(["body.name", "body.type"]);
    expect(refuse(live, post({ name: "E", type: "ethernet" }), 400).paths.sort()).toEqual([
      "body.ipaddress",
      "body.port",
    ]);
    expect(refuse(live, post({ name: "W", type: "wirelessGateway", port: 1 }), 400).paths).toEqual(["body.ipaddress"]);
    expect(refuse(live, post({ name: "U", type: "usb" }), 400).paths).toEqual(["body.port"]);
    expect(refuse(live, post({ name: "L", type: "lockhub" }), 400).paths).toEqual(["body.macaddress"]);
    expect(refuse(live, post({ name: "Z", type: "zigbee", port: 1 }), 400).paths).toEqual(["body.type"]);
    const hub = accept(live, post({ name: "L", type: "lockhub", macaddress: "00:11:22:33:44:55" }), 200);
    expect(read(live, `/cloud-nodes/n-annex/connections/${hub.id}`).body).toMatchObject({
      type: "lockhub",
      macAddress: "00:11:22:33:44:55",
      port: null,
    });
    accept(live, post({ name: "W", type: "wirelessGateway", ipaddress: "10.2.0.1", port: 7 }), 200);
  });

  test("protocol, ipv6Address and manufacturer are ethernet-only", () => {
    const live = liveOf();
    for (const k of ["protocol", "ipv6Address", "manufacturer"]) {
      const v = k === "protocol" ? "IPv4" : k === "manufacturer" ? "VENDOR_A" : "fe80::1";
      expect(
        refuse(
          live,
          {
            method: "POST",
            path: "/cloud-nodes/n-annex/connections",
            body: { name: "U", type: "usb", port: 1, [k]: v },
          },
          400,
        ).paths,
        k,
      ).toEqual([`body.${k}`]);
    }
  });

  test("S13 the defaults are ethernet-only: another type has no protocol or manufacturer, and a PUT to another type drops them", () => {
    const live = liveOf();
    const post = (body: object) => ({ method: "POST" as const, path: "/cloud-nodes/n-annex/connections", body });
    for (const body of [
      { name: "U", type: "usb", port: 1 },
      { name: "W", type: "wirelessGateway", ipaddress: "10.2.0.1", port: 7 },
      { name: "C", type: "wirelessCoordinator", port: 2 },
      { name: "L", type: "lockhub", macaddress: "00:11:22:33:44:55" },
    ]) {
      const got = read(live, `/cloud-nodes/n-annex/connections/${accept(live, post(body), 200).id}`).body;
      expect(got, body.type).not.toHaveProperty("protocol");
      expect(got, body.type).not.toHaveProperty("manufacturer");
    }
    // x-spare is an ethernet VENDOR_B controller speaking IPv6 (defaults); as a usb connection it has neither field.
    expect(read(live, "/cloud-nodes/n-main/connections/x-spare").body).toMatchObject({
      protocol: "IPv6",
      manufacturer: "VENDOR_B",
    });
    accept(
      live,
      { method: "PUT", path: "/cloud-nodes/n-main/connections/x-spare", body: { name: "Spare", type: "usb", port: 2 } },
      204,
    );
    const usb = read(live, "/cloud-nodes/n-main/connections/x-spare").body;
    expect(usb).toMatchObject({ type: "usb", port: 2 });
    expect(usb).not.toHaveProperty("protocol");
    expect(usb).not.toHaveProperty("manufacturer");
    // A usb body naming a manufacturer is refused at that field, and "configure network" has no VENDOR_A controller to configure.
    expect(
      refuse(
        live,
        {
          method: "PUT",
          path: "/cloud-nodes/n-main/connections/x-spare",
          body: { name: "Spare", type: "usb", port: 2, manufacturer: "VENDOR_A" },
        },
        400,
      ).issues,
    ).toEqual([
      {
        code: "invalid",
        path: ["body", "manufacturer"],
        message: "manufacturer is used by ethernet connections only; this is a usb connection.",
      },
    ]);
    expect(
      refuse(
        live,
        { method: "POST", path: "/cloud-nodes/n-main/connections/x-spare/configure", body: { dhcp: true } },
        409,
      ).issues[0]!.message,
    ).toContain("of no known manufacturer");
  });

  test("a connection update takes the same type rules as a create: a lockhub PUT without macaddress is 400 at body.macaddress", () => {
    const live = liveOf();
    const path = "/cloud-nodes/n-main/connections/x-spare";
    expect(refuse(live, { method: "PUT", path, body: { name: "Hub", type: "lockhub" } }, 400).issues).toEqual([
      { code: "invalid", path: ["body", "macaddress"], message: "A lockhub connection needs a macAddress." },
    ]);
    expect(
      refuse(live, { method: "PUT", path, body: { name: "GW", type: "wirelessGateway", port: 9 } }, 400).paths,
    ).toEqual(["body.ipaddress"]);
    accept(live, { method: "PUT", path, body: { name: "Hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:77" } }, 204);
    expect(read(live, path).body).toMatchObject({
      name: "Hub",
      type: "lockhub",
      macAddress: "00:1B:2C:4A:11:77",
      port: null,
    });
  });

  test("S14 a lockhub operates at most 64 locks: the 65th device is a 409 at body.connection, on create and on a move; a connection turned lockhub with 65 devices is a 409 at body.type", () => {
    const live = liveOf();
    const hub = accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-annex/connections",
        body: { name: "Annex hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:08" },
      },
      200,
    ).id!;
    const lock = (k: number, extra: object = {}) => ({
      method: "POST" as const,
      path: "/cloud-nodes/n-annex/devices",
      body: { name: `Lock ${k}`, type: "ioDevice", publicIcon: "other", connection: hub, port: k, ...extra },
    });
    const batch = live.apply(Array.from({ length: 64 }, (_, k) => lock(k + 1)));
    expect(batch.ok).toBe(true);
    const full = refuse(live, lock(65), 409);
    expect(full.issues).toEqual([
      {
        code: "overCapacity",
        path: ["body", "connection"],
        message: `Lockhub "${hub}" has 65 devices on it; a lockhub operates at most 64 locks.`,
      },
    ]);
    // A device of another connection moved onto the full hub: the same conflict.
    const usb = accept(
      live,
      { method: "POST", path: "/cloud-nodes/n-annex/connections", body: { name: "Annex board", type: "usb", port: 1 } },
      200,
    ).id!;
    const door = accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-annex/devices",
        body: { name: "Annex door", type: "primaryReader", publicIcon: "swingingDoor", connection: usb, port: 1 },
      },
      200,
    ).id!;
    const move = {
      name: "Annex door",
      type: "primaryReader",
      publicIcon: "swingingDoor",
      connection: hub,
      port: 99,
      delay: 0,
      dwell: 30,
      dps: false,
      rex: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
    };
    expect(
      refuse(live, { method: "PUT", path: `/cloud-nodes/n-annex/devices/${door}`, body: move }, 409).paths,
    ).toEqual(["body.connection"]);
    // A lock removed frees a place.
    const lock1 = live.snapshot.devices.find((d) => d.name === "Lock 1")!.id;
    accept(live, { method: "DELETE", path: `/cloud-nodes/n-annex/devices/${lock1}` }, 204);
    accept(live, { method: "PUT", path: `/cloud-nodes/n-annex/devices/${door}`, body: move }, 204);
    expect(read(live, `/cloud-nodes/n-annex/devices/${door}`).body).toMatchObject({ connection: hub, port: 99 });
    // The hub made an ethernet controller takes a 65th device; made a lockhub again, the connection's type is refused.
    accept(
      live,
      {
        method: "PUT",
        path: `/cloud-nodes/n-annex/connections/${hub}`,
        body: { name: "Annex controller", type: "ethernet", ipaddress: "10.2.0.9", port: 4000 },
      },
      204,
    );
    accept(live, lock(65), 200);
    const back = refuse(
      live,
      {
        method: "PUT",
        path: `/cloud-nodes/n-annex/connections/${hub}`,
        body: { name: "Annex hub", type: "lockhub", macaddress: "00:1B:2C:4A:11:08" },
      },
      409,
    );
    expect(back.issues).toEqual([
      {
        code: "overCapacity",
        path: ["body", "type"],
        message: `Lockhub "${hub}" has 65 devices on it; a lockhub operates at most 64 locks.`,
      },
    ]);
  });

  test("PUT 204 replaces the body and keeps the node; the connection must be on that node (404)", () => {
    const live = liveOf();
    accept(
      live,
      { method: "PUT", path: "/cloud-nodes/n-main/connections/x-spare", body: { ...ETH, name: "Spare 2" } },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main/connections/x-spare").body).toMatchObject({
      name: "Spare 2",
      protocol: "IPv6",
    });
    expect(live.snapshot.connections.find((c) => c.id === "x-spare")!.cloudNode).toBe("n-main");
    refuse(live, { method: "PUT", path: "/cloud-nodes/n-annex/connections/x-spare", body: ETH }, 404);
    refuse(live, { method: "GET", path: "/cloud-nodes/n-annex/connections/x-spare" }, 404);
    refuse(live, { method: "PUT", path: "/cloud-nodes/n-nope/connections/x-spare", body: ETH }, 404);
    expect(
      refuse(live, { method: "PUT", path: "/cloud-nodes/n-main/connections/x-spare", body: { name: "S" } }, 400).paths,
    ).toEqual(["body.type"]);
  });

  test("DELETE: a connection with devices → 409 naming each device; an unused one → 204", () => {
    const live = liveOf();
    expect(refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/connections/x-usb" }, 409).paths).toEqual([
      "devices.5.connection",
      "devices.6.connection",
    ]);
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/connections/x-spare" }, 204);
    expect(read(live, "/connections").body.map((c: { id: string }) => c.id)).toEqual(["x-eth", "x-usb"]);
  });

  test("configure network: VENDOR_A only; dhcp required; 204 and stored", () => {
    const live = liveOf();
    const path = "/cloud-nodes/n-main/connections/x-eth/configure";
    expect(refuse(live, { method: "POST", path, body: { netmask: "255.255.255.0" } }, 400).paths).toEqual([
      "body.dhcp",
    ]);
    accept(
      live,
      { method: "POST", path, body: { dhcp: false, netmask: "255.255.255.0", gateway: "10.0.0.1", dns: "10.0.0.2" } },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main/connections/x-eth").body).toMatchObject({
      dhcp: false,
      netmask: "255.255.255.0",
      gateway: "10.0.0.1",
      dns: "10.0.0.2",
    });
    refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/connections/x-spare/configure", body: { dhcp: true } },
      409,
    );
    refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/connections/x-usb/configure", body: { dhcp: true } },
      409,
    );
  });
});

describe("configure network: body fields", () => {
  test("dhcp is a boolean, netmask/gateway/dns strings or null (400 at the field); a field not given keeps its value, null clears it", () => {
    const live = liveOf();
    const path = "/cloud-nodes/n-main/connections/x-eth/configure";
    expect(refuse(live, { method: "POST", path, body: { dhcp: "yes" } }, 400).paths).toEqual(["body.dhcp"]);
    expect(
      refuse(live, { method: "POST", path, body: { dhcp: false, netmask: 24, dns: ["10.0.0.2"] } }, 400).paths,
    ).toEqual(["body.netmask", "body.dns"]);
    accept(
      live,
      { method: "POST", path, body: { dhcp: false, netmask: "255.255.255.0", gateway: "10.0.0.1", dns: "10.0.0.2" } },
      204,
    );
    accept(live, { method: "POST", path, body: { dhcp: true, dns: null } }, 204);
    expect(read(live, "/cloud-nodes/n-main/connections/x-eth").body).toMatchObject({
      dhcp: true,
      netmask: "255.255.255.0",
      gateway: "10.0.0.1",
      dns: null,
    });
    // A connection PUT keeps the network settings (L1): they are not part of its body.
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/connections/x-eth",
        body: { name: "Controller A", type: "ethernet", ipaddress: "10.0.0.5", port: 4000, manufacturer: "VENDOR_A" },
      },
      204,
    );
    expect(read(live, "/cloud-nodes/n-main/connections/x-eth").body).toMatchObject({
      dhcp: true,
      netmask: "255.255.255.0",
      gateway: "10.0.0.1",
    });
    refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-annex/connections/x-eth/configure", body: { dhcp: true } },
      404,
    );
  });
});

describe("devices", () => {
  const DOOR = { name: "Back Door", type: "primaryReader", publicIcon: "swingingDoor", connection: "x-spare", port: 1 };
  const UPDATE = {
    ...DOOR,
    delay: 5,
    dwell: 50,
    dps: true,
    rex: true,
    autoOpenAfterFirstAllow: false,
    authenticationPolicy: null,
  };

  test("POST 200 {id} with the seed defaults", () => {
    const live = liveOf();
    const r = accept(live, { method: "POST", path: "/cloud-nodes/n-main/devices", body: DOOR }, 200);
    expect(read(live, `/cloud-nodes/n-main/devices/${r.id}`).body).toEqual({
      id: r.id,
      ...DOOR,
      partition: [],
      primaryReader: null,
      inputTypes: ["wiegand", "unencryptedOsdp", "encryptedOsdp"],
      osdpAddress: null,
      wirelessAddress: null,
      readerType: "standard",
      readerSerialNumber: null,
      supportBleCredentials: false,
      securedReadsOnly: false,
      delay: 0,
      dwell: 30,
      dps: false,
      propAlarm: false,
      propDelay: 0,
      rex: false,
      forcedAlarm: false,
      autoOpenAfterFirstAllow: false,
      authenticationPolicy: null,
      hardwareVersion: null,
      serialNumber: null,
      firmwareVersion: null,
      created: "2026-04-15 12:00:00",
    });
    // The node is the path's (L23): the answer does not repeat it.
    expect(live.snapshot.devices.find((d) => d.id === r.id)!.cloudNode).toBe("n-main");
    expect(read(live, `/cloud-nodes/n-main/devices/${r.id}?include=connection`).body.connection).toEqual({
      id: "x-spare",
      name: "Spare",
      type: "ethernet",
    });
  });

  test("create requires name, type, connection, port; publicIcon for primaryReader, ioDevice, premiumIoDevice", () => {
    const live = liveOf();
    expect(refuse(live, { method: "POST", path: "/cloud-nodes/n-main/devices", body: {} }, 400).paths.sort()).toEqual([
      "body.connection",
      "body.name",
      "body.port",
      "body.type",
    ]);
    for (const type of ["primaryReader", "ioDevice", "premiumIoDevice"]) {
      const { publicIcon: _none, ...body } = { ...DOOR, type };
      expect(refuse(live, { method: "POST", path: "/cloud-nodes/n-main/devices", body }, 400).paths, type).toEqual([
        "body.publicIcon",
      ]);
    }
    accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/devices",
        body: { name: "Relay 9", type: "floorRelay", connection: "x-spare", port: 9 },
      },
      200,
    );
  });

  test("limits: name ≤ 70, delay 0–9999, dwell 1–9999, propDelay 0–9999; osdpAddress 0–3", () => {
    const live = liveOf();
    const post = (extra: object) => ({
      method: "POST" as const,
      path: "/cloud-nodes/n-main/devices",
      body: { ...DOOR, ...extra },
    });
    expect(refuse(live, post({ name: "n".repeat(71) }), 400).paths).toEqual(["body.name"]);
    for (const [k, v] of [
      ["delay", -1],
      ["delay", 10000],
      ["dwell", 0],
      ["dwell", 10000],
      ["propDelay", 10000],
      ["osdpAddress", 4],
    ] as const)
      expect(refuse(live, post({ [k]: v, dps: true, propAlarm: true }), 400).paths, `${k}=${v}`).toEqual([`body.${k}`]);
    const r = accept(
      live,
      post({ name: "n".repeat(70), delay: 9999, dwell: 1, dps: true, propAlarm: true, propDelay: 9999 }),
      200,
    );
    expect(read(live, `/cloud-nodes/n-main/devices/${r.id}`).body).toMatchObject({
      delay: 9999,
      dwell: 1,
      propDelay: 9999,
    });
  });

  test("enums: type, publicIcon, inputTypes, readerType and authenticationPolicy take only the seed's values (400 at the field); given values are stored", () => {
    const live = liveOf();
    const post = (extra: object) => ({
      method: "POST" as const,
      path: "/cloud-nodes/n-main/devices",
      body: { ...DOOR, ...extra },
    });
    for (const [k, v, at] of [
      ["type", "door", "body.type"],
      ["publicIcon", "door", "body.publicIcon"],
      ["inputTypes", ["nfc"], "body.inputTypes.0"],
      ["inputTypes", [], "body.inputTypes"],
      ["readerType", "blue", "body.readerType"],
      ["authenticationPolicy", "cardOrFace", "body.authenticationPolicy"],
    ] as const)
      expect(refuse(live, post({ [k]: v }), 400).paths, `${k}=${JSON.stringify(v)}`).toEqual([at]);
    const given = {
      readerType: "touch",
      inputTypes: ["encryptedOsdp"],
      osdpAddress: 3,
      authenticationPolicy: "cardOnly",
      supportBleCredentials: true,
      securedReadsOnly: true,
      readerSerialNumber: "RS-0042",
      publicIcon: "rollUpDoor",
      dps: true,
      forcedAlarm: true,
      rex: true,
      autoOpenAfterFirstAllow: true,
    };
    const r = accept(live, post(given), 200);
    expect(read(live, `/cloud-nodes/n-main/devices/${r.id}`).body).toMatchObject(given);
    // A premiumIoDevice needs a publicIcon too; an elevator reader or floor relay does not.
    accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/devices",
        body: { name: "Relay", type: "premiumIoDevice", publicIcon: "light", connection: "x-spare", port: 2 },
      },
      200,
    );
    accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/devices",
        body: { name: "Lift 2", type: "elevatorReader", connection: "x-spare", port: 3 },
      },
      200,
    );
  });

  test("a wirelessAddress is stored for a device on a wirelessCoordinator connection", () => {
    const live = liveOf();
    const coord = accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/connections",
        body: { name: "Mesh", type: "wirelessCoordinator", port: 3 },
      },
      200,
    ).id!;
    const r = accept(
      live,
      {
        method: "POST",
        path: "/cloud-nodes/n-main/devices",
        body: { ...DOOR, connection: coord, wirelessAddress: "00:0D:6F:00:0A:1B" },
      },
      200,
    );
    expect(read(live, `/cloud-nodes/n-main/devices/${r.id}`).body).toMatchObject({
      connection: coord,
      wirelessAddress: "00:0D:6F:00:0A:1B",
    });
  });

  test("dependent fields: propAlarm/forcedAlarm need dps, propDelay needs propAlarm, osdpAddress an OSDP input, primaryReader only for additional readers", () => {
    const live = liveOf();
    const post = (extra: object) => ({
      method: "POST" as const,
      path: "/cloud-nodes/n-main/devices",
      body: { ...DOOR, ...extra },
    });
    expect(refuse(live, post({ propAlarm: true }), 400).paths).toEqual(["body.propAlarm"]);
    expect(refuse(live, post({ forcedAlarm: true }), 400).paths).toEqual(["body.forcedAlarm"]);
    expect(refuse(live, post({ propDelay: 5 }), 400).paths).toEqual(["body.propDelay"]);
    expect(refuse(live, post({ inputTypes: ["wiegand"], osdpAddress: 1 }), 400).paths).toEqual(["body.osdpAddress"]);
    expect(refuse(live, post({ primaryReader: "d-front" }), 400).paths).toEqual(["body.primaryReader"]);
    expect(refuse(live, post({ type: "additionalReader" }), 400).paths).toEqual(["body.primaryReader"]);
    const primary = refuse(live, post({ type: "additionalReader", primaryReader: "d-fan" }), 400);
    expect(primary.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["invalidReference", "body.primaryReader"]]);
    expect(refuse(live, post({ wirelessAddress: "A1" }), 400).paths).toEqual(["body.wirelessAddress"]);
  });

  test("device names are unique (409); a port of a connection holds one device (409); the same port on another connection is fine", () => {
    const live = liveOf();
    const name = refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/devices", body: { ...DOOR, name: "Front Door" } },
      409,
    );
    expect(name.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["duplicateName", "body.name"]]);
    const port = refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/devices", body: { ...DOOR, connection: "x-eth" } },
      409,
    );
    expect(port.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["portInUse", "body.port"]]);
    expect(port.issues[0]!.message).toContain("devices[0]");
    accept(live, { method: "POST", path: "/cloud-nodes/n-main/devices", body: DOOR }, 200);
  });

  test("an unknown connection, or a connection of another node → 400", () => {
    const live = liveOf();
    const conn = refuse(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/devices", body: { ...DOOR, connection: "x-nope" } },
      400,
    );
    expect(conn.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["unknownReference", "body.connection"]]);
    const other = refuse(live, { method: "POST", path: "/cloud-nodes/n-annex/devices", body: DOOR }, 400);
    expect(other.issues.map((i) => [i.code, i.path.join(".")])).toEqual([["inconsistentReference", "body.connection"]]);
    refuse(live, { method: "POST", path: "/cloud-nodes/n-nope/devices", body: DOOR }, 404);
  });

  test("update requires delay, dwell, dps, rex, autoOpenAfterFirstAllow, authenticationPolicy besides the create fields", () => {
    const live = liveOf();
    const path = "/cloud-nodes/n-main/devices/d-front";
    expect(refuse(live, { method: "PUT", path, body: DOOR }, 400).paths.sort()).toEqual(
      ["authenticationPolicy", "autoOpenAfterFirstAllow", "delay", "dps", "dwell", "rex"].map((k) => `body.${k}`),
    );
    const { publicIcon: _none, ...noIcon } = UPDATE;
    expect(refuse(live, { method: "PUT", path, body: noIcon }, 400).paths).toEqual(["body.publicIcon"]);
    accept(live, { method: "PUT", path, body: { ...UPDATE, name: "Front Door", connection: "x-eth", port: 1 } }, 204);
    expect(read(live, path).body).toMatchObject({
      delay: 5,
      dwell: 50,
      dps: true,
      rex: true,
      created: null,
    });
    expect(live.snapshot.devices.find((d) => d.id === "d-front")!.cloudNode).toBe("n-main");
    refuse(live, { method: "PUT", path: "/cloud-nodes/n-annex/devices/d-front", body: UPDATE }, 404);
  });

  test("a device's authenticationPolicy takes effect: cardAndPin needs the PIN too", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-front",
        body: { ...UPDATE, name: "Front Door", connection: "x-eth", port: 1, authenticationPolicy: "cardAndPin" },
      },
      204,
    );
    expect(scan(live, "d-front", 1001, 10).outcome).toBe("denied");
    expect(
      live.engine.decide({
        deviceId: "d-front",
        at: AT,
        credential: { credentialNumber: 1001, facilityCode: 10 },
        pin: "1234",
      }).outcome,
    ).toBe("allowed");
  });

  test("moving a device to another connection and port through PUT frees its old port", () => {
    const live = liveOf();
    accept(
      live,
      {
        method: "PUT",
        path: "/cloud-nodes/n-main/devices/d-fan",
        body: { ...UPDATE, name: "Fan", type: "ioDevice", publicIcon: "fan", connection: "x-spare", port: 2 },
      },
      204,
    );
    accept(
      live,
      { method: "POST", path: "/cloud-nodes/n-main/devices", body: { ...DOOR, connection: "x-usb", port: 2 } },
      200,
    );
  });

  test("DELETE: each referrer is named — rules, additional readers, floor groups (as reader and as floor)", () => {
    const live = liveOf();
    expect(refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-front" }, 409).paths).toEqual([
      "rules.0.devices.0",
      "devices.1.primaryReader",
    ]);
    expect(refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-lift" }, 409).paths).toEqual([
      "floorGroups.0.readerPort",
      "floorGroups.1.readerPort",
    ]);
    expect(refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-floor-1" }, 409).paths).toEqual([
      "floorGroups.0.floors.0",
    ]);
    expect(refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-side" }, 409).paths).toEqual([
      "rules.0.devices.1",
    ]);
  });

  test("DELETE 204: the device is gone and scans there are unknownDevice; wrong node or unknown → 404", () => {
    const live = liveOf();
    refuse(live, { method: "DELETE", path: "/cloud-nodes/n-annex/devices/d-fan" }, 404);
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-fan" }, 204);
    expect(scan(live, "d-fan", 1001, 10).reason).toBe("unknownDevice");
    refuse(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-fan" }, 404);
    // and the additional reader first, then its primary (once its rule no longer names it)
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-front-out" }, 204);
    accept(
      live,
      {
        method: "PUT",
        path: "/rules/r-staff-door",
        body: {
          type: "door",
          groupId: "g-staff",
          devices: ["d-side"],
          startTime: "00:00:00",
          stopTime: "24:00:00",
          recurring: ["Mon"],
        },
      },
      204,
    );
    accept(live, { method: "DELETE", path: "/cloud-nodes/n-main/devices/d-front" }, 204);
  });

  test("GET /cloud-nodes/{id}/hardware and wireless diagnostics answer for a known node, 404 otherwise", () => {
    const live = liveOf();
    expect(read(live, "/cloud-nodes/n-main/hardware").body).toEqual([]);
    expect(read(live, "/cloud-nodes/n-main/diagnostics/wireless").body).toEqual([]);
    refuse(live, { method: "GET", path: "/cloud-nodes/n-nope/hardware" }, 404);
  });
});
