// The data server sends RSOP as the engine's JSON bytes (engine.rsopJsonBytes: each entry's JSON
// made once, not JSON.stringify per answer): the text is exactly what JSON.stringify makes of the
// live engine's RSOP result, pretty or compact as the server is set, for an admin and for a manager
// (its holders only), system-wide and per node, before and after a change that renames a device.
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { createDataApp } from "../../src/adapters/http/createDataApp.js";
import { openDurableSystem } from "../../src/service/store/durableSystem.js";
import { openSqliteStore } from "../../src/adapters/store/sqliteStore.js";
import { reportSystemInput } from "../reports/fixture.js";
import { removeTempDirs, tempDir } from "./fixtures.js";

afterAll(removeTempDirs);

const SYS = "/sys-reports";
const AT = "2026-04-15T15:00:00Z";

test("RSOP answers are JSON.stringify's text of the live engine's result, pretty and compact, for an admin and a manager", async () => {
  for (const indent of [2, 0]) {
    const durable = await openDurableSystem(await openSqliteStore(join(tempDir(), `rsop-${indent}.db`)), {
      initial: { kind: "system", json: reportSystemInput() },
    });
    const app = await createDataApp({
      durable,
      indent,
      grants: (token) =>
        token === "admin-token-aaaaaaaaaaaa"
          ? { role: "admin", partitions: null }
          : token === "manager-lab-token-bbbbbbbb"
            ? { role: "manager", partitions: new Set(["p-lab"]) }
            : null,
    });
    const get = async (path: string, token = "admin-token-aaaaaaaaaaaa") => {
      const res = await app.fetch(
        new Request(`http://127.0.0.1${SYS}${path}`, { headers: { authorization: `Bearer ${token}` } }),
      );
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      return res.text();
    };
    const liveEngine = () => {
      const target = durable.target;
      if (target.kind !== "system") throw new Error("a 2.0 system");
      return target.live.engine;
    };
    const expected = (ids: string[], cloudNodeId?: string) => {
      const result = liveEngine().rsop(ids, cloudNodeId === undefined ? { at: AT } : { at: AT, cloudNodeId });
      return indent > 0 ? `${JSON.stringify(result, null, indent)}\n` : JSON.stringify(result);
    };
    try {
      expect(await get(`/rsop/holders?ids=h-ann,h-bob,h-cat&at=${AT}`)).toBe(expected(["h-ann", "h-bob", "h-cat"]));
      expect(await get(`/cloud-nodes/n-1/rsop/holders?ids=h-bob&at=${AT}`)).toBe(expected(["h-bob"], "n-1"));
      expect(await get(`/rsop/holders?ids=h-dan&at=${AT}`, "manager-lab-token-bbbbbbbb")).toBe(expected(["h-dan"]));
      const rename = await durable.write({
        method: "PUT",
        path: "/cloud-nodes/n-1/devices/d-front",
        body: {
          name: "Front door (renamed)",
          type: "primaryReader",
          publicIcon: "swingingDoor",
          connection: "k-1",
          port: 1,
          delay: 0,
          dwell: 30,
          dps: false,
          rex: false,
          autoOpenAfterFirstAllow: false,
          authenticationPolicy: null,
        },
      });
      expect(rename.ok, JSON.stringify(rename)).toBe(true);
      const after = await get(`/rsop/holders?ids=h-ann&at=${AT}`);
      expect(after).toContain("Front door (renamed)");
      expect(after).toBe(expected(["h-ann"]));
    } finally {
      await durable.close();
    }
  }
});
