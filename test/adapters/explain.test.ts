// explain through each door: the library (what a trace holds), the CLI (`rsop explain`) and HTTP
// (`POST /{system_id}/decisions/explain`, read-only handler and `--data` server).
import { afterAll, describe, expect, test } from "vitest";
import { AccessState, loadEngineOrThrow } from "../../src/index.js";
import { createHttpHandler } from "../../src/http.js";
import type { LiveSystem } from "../../src/live/index.js";
import { formatExplanation, paintFor } from "../../src/adapters/cli/explainCommand.js";
import { SYSTEM_ID, dataDir, startData } from "../http/dataSupport.js";
import { BUILDING_FILE, BUILDING_ID, TOKEN, building, removeTempDirs } from "../http/fixtures.js";
import { building as liveBuilding } from "../live/fixture.js";
import { run, tempFiles } from "./cliHarness.js";

afterAll(removeTempDirs);

const nurseSunday = {
  deviceId: "door-ward-3",
  at: "2026-04-19T03:00:00-05:00",
  credential: { credentialNumber: 10234, facilityCode: 17 },
};
const nurseWeekday = { ...nurseSunday, at: "2026-04-15T09:15:00-05:00" };

describe("engine.explain", () => {
  test("a trace names the device and node, the read, the holder, the local time with its offset and every candidate rule", () => {
    const { decision, trace } = building.explain(nurseSunday);
    expect(decision).toStrictEqual(building.decide(nurseSunday));
    expect(trace.map((s) => s.step)).toEqual([
      "request",
      "device",
      "read",
      "fallback",
      "credential",
      "holder",
      "rules",
      "decision",
    ]);
    const byStep = Object.fromEntries(trace.map((s) => [s.step, s]));
    expect(byStep.device!.details).toMatchObject({
      deviceId: "door-ward-3",
      cloudNodeId: "node-chicago-main",
      timezone: "America/Chicago",
    });
    expect(byStep.read!.details).toMatchObject({
      format: "H10301",
      facilityCode: 17,
      credentialNumber: 10234,
      facilityCodePolicy: "ENFORCED",
    });
    expect(byStep.credential!.details).toMatchObject({ holderId: "holder-0001", credentialId: "cred-0001-1" });
    expect(byStep.holder!.details).toMatchObject({
      localTime: "2026-04-19T03:00:00.000-05:00",
      utcOffset: "-05:00",
      utc: "2026-04-19T08:00:00.000Z",
    });
    expect(byStep.rules!.decided).toBe("noActiveRule");
    expect(byStep.rules!.details.candidates).toEqual([
      expect.objectContaining({
        ruleId: "rule-nurses-day-weekdays",
        allow: true,
        open: false,
        applicable: false,
        window: "06:30:00–19:30:00 Mon,Tue,Wed,Thu,Fri",
      }),
    ]);
    expect(byStep.decision!.details).toStrictEqual({ ...decision, floors: [] });
  });

  test("an allowed scan ends in the policy step with the accepting rule", () => {
    const { decision, trace } = building.explain(nurseWeekday);
    expect(decision.outcome).toBe("allowed");
    const policy = trace.at(-2)!;
    expect(policy).toMatchObject({
      step: "policy",
      decided: "allowed",
      details: { factors: "card", acceptingRuleId: "rule-nurses-day-weekdays" },
    });
  });

  test("a Wiegand read shows the format, the decoded fields and the parity verdict", () => {
    // 26-bit H10301, facility 17, card 10234, with the last (odd parity) bit flipped.
    const fc = (17).toString(2).padStart(8, "0");
    const cn = (10234).toString(2).padStart(16, "0");
    const data = fc + cn;
    const even = [...data.slice(0, 12)].filter((b) => b === "1").length % 2 === 0 ? "0" : "1";
    const odd = [...data.slice(12)].filter((b) => b === "1").length % 2 === 0 ? "1" : "0";
    const good = `${even}${data}${odd}`;
    const bad = `${even}${data}${odd === "1" ? "0" : "1"}`;
    expect(
      building.explain({ ...nurseWeekday, credential: { wiegand: good } }).trace.find((s) => s.step === "read")!
        .details,
    ).toMatchObject({
      bits: 26,
      format: "H10301",
      facilityCode: 17,
      credentialNumber: 10234,
      parityOk: true,
    });
    const failed = building.explain({ ...nurseWeekday, credential: { wiegand: bad } });
    expect(failed.decision.reason).toBe("parityError");
    expect(failed.trace.at(-2)).toMatchObject({
      step: "read",
      decided: "parityError",
      details: { parityOk: false, enforceParity: true },
    });
  });

  test("a malformed request is explained by its problems, with paths; an unknown device stops at the device step", () => {
    const bad = building.explain({ deviceId: "door-ward-3", at: "yesterday" });
    expect(bad.trace.map((s) => s.step)).toEqual(["request", "decision"]);
    expect(bad.trace[0]!.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: "at" })]));
    const unknown = building.explain({ ...nurseWeekday, deviceId: "no-such-door" });
    expect(unknown.trace.map((s) => s.step)).toEqual(["request", "device", "decision"]);
    expect(unknown.trace[1]!.decided).toBe("unknownDevice");
  });
});

describe("engine.explain with door states (docs/semantics.md TL5, AB5)", () => {
  const snapshot = building.snapshot;
  const lockdown = loadEngineOrThrow({
    ...snapshot,
    cloudNodes: snapshot.cloudNodes.map((n) => (n.id === "node-chicago-main" ? { ...n, threatLevel: 2 } : n)),
  });

  test("TL5: a rule set aside by the threat level is marked, listed in the summary and not applicable; the printer says so", () => {
    const { decision, trace } = lockdown.explain(nurseWeekday);
    expect(decision).toMatchObject({ reason: "threatLevel", activeRuleId: "rule-nurses-day-weekdays" });
    const rules = trace.find((s) => s.step === "rules")!;
    expect(rules.decided).toBe("threatLevel");
    expect(rules.summary).toContain("set aside by threat level 2: rule-nurses-day-weekdays (up to level 0)");
    expect(rules.details.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          ruleId: "rule-nurses-day-weekdays",
          open: true,
          applicable: false,
          threatLevel: { level: 2, max: 0, setAside: true },
        }),
      ]),
    );
    expect(trace.find((s) => s.step === "fallback")!.details).toMatchObject({ online: true, threatLevel: 2 });
    const text = formatExplanation(lockdown.explain(nurseWeekday), paintFor(false));
    expect(text).toContain("rule-nurses-day-weekdays");
    expect(text).toContain("set aside at threat level 2 (up to 0)");
  });

  test("C4: the printer names the calendar that closed a rule whose window was open", () => {
    const holiday = loadEngineOrThrow({
      ...snapshot,
      calendars: [{ id: "cal-holidays", name: "Holidays", dates: ["2026-04-15"] }],
      rules: snapshot.rules.map((r) =>
        r.id === "rule-nurses-day-weekdays" ? { ...r, calendar: { id: "cal-holidays", mode: "exclude" as const } } : r,
      ),
    });
    const text = formatExplanation(holiday.explain(nurseWeekday), paintFor(false));
    expect(text).toMatch(/rule-nurses-day-weekdays .*: closed; closed by calendar cal-holidays/);
  });

  test("TL4: an e-card read at a raised level passes in the fallback step, online", () => {
    const { decision, trace } = lockdown.explain({ ...nurseWeekday, credential: { credentialNumber: 7001 } });
    expect(decision.reason).toBe("ecard");
    const fallback = trace.at(-2)!;
    expect(fallback).toMatchObject({ step: "fallback", decided: "ecard" });
    expect(fallback.summary).toContain("Threat level 2: the card is an e-card, which passes");
  });

  test("AB5: with a state, an area entry adds the areas step, which decides a hard anti-passback denial", () => {
    const withArea = loadEngineOrThrow({
      ...snapshot,
      areas: [
        {
          id: "area-ward-3",
          name: "Ward 3",
          entries: ["door-ward-3"],
          antiPassback: { mode: "hard", resetSeconds: 0 },
          occupancyLimit: 10,
        },
      ],
    });
    const state = new AccessState();
    const first = withArea.explain(nurseWeekday, state);
    expect(first.trace.map((s) => s.step)).toContain("areas");
    expect(first.decision.reason).toBe("allowed");
    withArea.record(nurseWeekday, first.decision, state);
    const again = withArea.explain(nurseWeekday, state);
    expect(again.decision).toStrictEqual(withArea.decide(nurseWeekday, undefined, state));
    expect(again.trace.at(-2)).toMatchObject({
      step: "areas",
      decided: "antiPassback",
      details: { areas: [expect.objectContaining({ areaId: "area-ward-3", antiPassback: "hard", occupancy: 1 })] },
    });
    // Without a state the areas are not consulted, and the trace has no areas step.
    expect(withArea.explain(nurseWeekday).trace.map((s) => s.step)).not.toContain("areas");
  });
});

test("explain never throws: hostile requests get decide's decision and a trace", () => {
  const throwing = new Proxy(
    {},
    {
      get: () => {
        throw new Error("boom");
      },
      ownKeys: () => {
        throw new Error("boom");
      },
    },
  );
  const getter = Object.defineProperty({ ...nurseWeekday }, "pin", {
    enumerable: true,
    get: () => {
      throw new Error("boom");
    },
  });
  for (const r of [throwing, getter, null, 42, "x", [], { ...nurseWeekday, credential: null }]) {
    const { decision, trace } = building.explain(r);
    expect(decision).toStrictEqual(building.decide(r));
    expect(trace.at(-1)!.step).toBe("decision");
  }
});

describe("rsop explain", () => {
  const { file } = tempFiles("rsop-explain-");

  test("X2: the request as JSON text or a file; a readable trace without colour when stdout is not a terminal; --json prints {decision, trace}", async () => {
    const text = await run(["explain", "--system", BUILDING_FILE, "--request", JSON.stringify(nurseSunday)]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain("\u001b[");
    expect(text.stdout).toContain("7. rules → noActiveRule");
    expect(text.stdout).toContain("rule-nurses-day-weekdays");
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(
      "Decision: denied/noActiveRule, holder holder-0001, credential cred-0001-1",
    );
    const json = await run([
      "explain",
      "--system",
      BUILDING_FILE,
      "--request",
      file("req.json", nurseSunday),
      "--json",
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toStrictEqual(JSON.parse(JSON.stringify(building.explain(nurseSunday))));
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(["decision", "trace"]);
  });

  test("colour only on a terminal", () => {
    const e = building.explain(nurseSunday);
    expect(formatExplanation(e, paintFor({ isTTY: true }))).toContain("\u001b[");
    expect(formatExplanation(e, paintFor({}))).not.toContain("\u001b[");
  });

  test("a malformed request exits 1 with every problem and its path; a missing option exits 2", async () => {
    const bad = await run(["explain", "--system", BUILDING_FILE, "--request", '{"deviceId":"door-ward-3","at":"x"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("at: Must be an ISO 8601 instant");
    expect(bad.stderr).toContain("(root): Present a credential, a PIN, or both.");
    const broken = await run(["explain", "--system", BUILDING_FILE, "--request", '{"deviceId":']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("--request is not valid JSON");
    expect((await run(["explain", "--system", BUILDING_FILE])).code).toBe(2);
  });
});

describe("POST /{system_id}/decisions/explain", () => {
  const handle = createHttpHandler({ getEngine: () => building, authorize: (t) => t === TOKEN, indent: 0 });
  const post = (body: string) =>
    handle(
      new Request(`http://rsop.test/${BUILDING_ID}/decisions/explain`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body,
      }),
    );

  test("answers engine.explain for one request", async () => {
    const res = await post(JSON.stringify(nurseWeekday));
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(JSON.parse(JSON.stringify(building.explain(nurseWeekday))));
  });

  test("X1: one request only; a malformed one is 400 with each problem's path", async () => {
    const arr = await post(JSON.stringify([nurseWeekday]));
    expect(arr.status).toBe(400);
    expect(((await arr.json()) as { error: { issues: unknown } }).error.issues).toEqual([
      { path: "", message: expect.stringContaining("not an array") },
    ]);
    const bad = await post(JSON.stringify({ deviceId: "door-ward-3", at: "x" }));
    expect(bad.status).toBe(400);
    expect(
      ((await bad.json()) as { error: { issues: { path: string }[] } }).error.issues.map(
        (i: { path: string }) => i.path,
      ),
    ).toEqual(expect.arrayContaining(["at"]));
    const get = await handle(
      new Request(`http://rsop.test/${BUILDING_ID}/decisions/explain`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
    );
    expect(get.status).toBe(405);
  });

  test("the --data server answers it on the live engine", async () => {
    const { db } = dataDir();
    const { server, call } = await startData(db, liveBuilding());
    const scan = { deviceId: "d-fan", at: "2026-04-15T12:00:00Z", pin: "0000" };
    const r = await call("POST", "/decisions/explain", scan);
    expect(r.status).toBe(200);
    const live = server.durable.target.live as LiveSystem;
    expect(r.body).toStrictEqual(JSON.parse(JSON.stringify(live.engine.explain(scan))));
    expect(live.snapshot.systemId).toBe(SYSTEM_ID);
  }, 60_000);
});
