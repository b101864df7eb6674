import { describe, expect, test } from "vitest";
import { hostLabel, panelTarget } from "../../src/adapters/http/hostRouting.js";

const registered = new Set(["cn-100", "CN200"]);
const isSerial = (s: string) => registered.has(s);

describe("T50: which host a request is for", () => {
  test("the per-node host by Host S.<domain> with a path under /api/, for a registered serial only", () => {
    expect(panelTarget("cn-100.panels.example.test", "/api/persons", isSerial)).toEqual({
      serial: "cn-100",
      path: "/api/persons",
    });
    expect(panelTarget("cn-100.example.test:8443", "/api/info", isSerial)).toEqual({
      serial: "cn-100",
      path: "/api/info",
    });
    // Not registered, an IP literal, a bare name, a path outside /api: the accounts or systems host.
    expect(panelTarget("cn-999.example.test", "/api/persons", isSerial)).toBeNull();
    expect(panelTarget("127.0.0.1:8080", "/api/organizations/mine", isSerial)).toBeNull();
    expect(panelTarget("[::1]:8080", "/api/organizations/mine", isSerial)).toBeNull();
    expect(panelTarget("localhost", "/api/organizations/mine", isSerial)).toBeNull();
    expect(panelTarget("cn-100.example.test", "/sys-1/holders", isSerial)).toBeNull();
    expect(panelTarget(null, "/api/persons", isSerial)).toBeNull();
  });

  test("the path form /panels/S/api/… on any host, registered or not (an unknown one is then 404 there)", () => {
    expect(panelTarget("127.0.0.1", "/panels/cn-100/api/persons/3", isSerial)).toEqual({
      serial: "cn-100",
      path: "/api/persons/3",
    });
    expect(panelTarget("x.example.test", "/panels/unknown/api", isSerial)).toEqual({ serial: "unknown", path: "/api" });
    expect(panelTarget("127.0.0.1", "/panels/a%20b/api/info", isSerial)).toEqual({ serial: "a b", path: "/api/info" });
    expect(panelTarget("127.0.0.1", "/panels/cn-100/other", isSerial)).toBeNull();
    expect(panelTarget("127.0.0.1", "/panels/cn-100", isSerial)).toBeNull();
    expect(panelTarget("127.0.0.1", "/panels/%E0%A4%A/api", isSerial)).toBeNull();
  });

  test("hostLabel: the first label of a name with a dot, never of an address", () => {
    expect(hostLabel("CN200.Example.Test.")).toBe("CN200");
    expect(hostLabel("10.0.0.1")).toBeNull();
    expect(hostLabel(".example.test")).toBeNull();
  });
});
