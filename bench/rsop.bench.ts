// Scenario: RSOP of one holder with about 50 rules — once with rules over areas of doors (hundreds of
// devices in the result), once with single-door rules (about 50 devices) — and of 100 holders; and
// who-can-access for one device (the door most groups reach, and a median one).
import { type Row, batchRow, log, sink, timeBatches } from "./benchUtil.js";
import { DAY, YEAR_START, fixture, mulberry32 } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

/** 64 instants over 2026 at 15:00Z on weekdays, so RSOP sees active and inactive windows. */
function instants(): number[] {
  const out: number[] = [];
  for (let d = 10; out.length < 64; d += 5) {
    const t = YEAR_START + d * DAY + 15 * 3_600_000;
    const wd = new Date(t).getUTCDay();
    if (wd !== 0 && wd !== 6) out.push(t);
  }
  return out;
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const ats = instants();
  const timing = { timeMs: ctx.quick ? 500 : 1_000, warmupMs: ctx.quick ? 150 : 300 };
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const engine = f.engine;
    const meta = f.meta;

    // One holder with about 50 rules: area rules, then single-door rules.
    for (const [label, id, key] of [
      ["rsop(1 holder, area rules)", meta.rsopHolderId, "wide"],
      ["rsop(1 holder, single-door rules)", meta.rsopNarrowHolderId, "narrow"],
    ] as const) {
      const probe = engine.rsop([id], { at: ats[0]! }).holders[0]!;
      let a = 0;
      const batch = key === "wide" ? 5 : 50;
      const one = () => {
        let acc = 0;
        for (let i = 0; i < batch; i++) {
          acc += engine.rsop([id], { at: ats[a]! }).holders[0]!.devices.length;
          if (++a === ats.length) a = 0;
        }
        sink.value += acc;
      };
      const r1 = await timeBatches(`rsop ${size} ${key}`, one, batch, timing);
      log(`  ${label} ${size}: ${(r1.meanNs / 1000).toFixed(1)} µs`);
      rows.push(
        batchRow(
          "rsop",
          size,
          label,
          r1,
          `${probe.rules.length} rules → ${probe.devices.length} devices, ${probe.floorGroups.length} floor groups (of ${meta.devices.size.toLocaleString("en-US")} devices); batches of ${batch}`,
        ),
      );
      ctx.facts[`rsop.${size}.${key}.ns`] = r1.meanNs;
      ctx.facts[`rsop.${size}.${key}.rules`] = probe.rules.length;
      ctx.facts[`rsop.${size}.${key}.devices`] = probe.devices.length;
    }

    // The same area-rules holder as a server answers it (JSON, UTF-8, indented as `rsop serve`
    // answers by default): the result serialized whole, and the engine's bytes from pieces kept.
    const utf8 = new TextEncoder();
    for (const [label, answer] of [
      [
        "rsop + JSON.stringify(·, null, 2) + UTF-8 (how the server answered before)",
        (at: number) => utf8.encode(JSON.stringify(engine.rsop([meta.rsopHolderId], { at }), null, 2)).length,
      ],
      [
        "rsopJsonBytes(·, 2) (how the server answers)",
        (at: number) => engine.rsopJsonBytes([meta.rsopHolderId], { at }, 2).length,
      ],
      ["rsopJsonBytes, compact", (at: number) => engine.rsopJsonBytes([meta.rsopHolderId], { at }).length],
    ] as const) {
      let a = 0;
      const one = () => {
        let acc = 0;
        for (let i = 0; i < 5; i++) {
          acc += answer(ats[a]!);
          if (++a === ats.length) a = 0;
        }
        sink.value += acc;
      };
      const r = await timeBatches(`rsop ${size} ${label}`, one, 5, timing);
      rows.push(
        batchRow(
          "rsop",
          size,
          `rsop(1 holder, area rules) answered: ${label}`,
          r,
          `${answer(ats[0]!).toLocaleString("en-US")} bytes; batches of 5`,
        ),
      );
      log(`  ${label} ${size}: ${(r.meanNs / 1000).toFixed(1)} µs`);
    }

    // 100 holders (a deterministic draw).
    const rnd = mulberry32(0x100 + meta.holders.length);
    const hundred = Array.from({ length: 100 }, () => meta.holders[Math.floor(rnd() * meta.holders.length)]!.id);
    const probe100 = engine.rsop(hundred, { at: ats[0]! });
    const rules100 = probe100.holders.reduce((s, h) => s + h.rules.length, 0);
    let b = 0;
    const many = () => {
      sink.value += engine.rsop(hundred, { at: ats[b]! }).holders.length;
      if (++b === ats.length) b = 0;
    };
    const r100 = await timeBatches(`rsop ${size} 100`, many, 1, timing);
    rows.push(
      batchRow("rsop", size, "rsop(100 holders)", r100, `one call; ${rules100} rules in all; latency per call`),
    );

    // Who can access: the door reached by the most groups, and a median door.
    const groupsAt = new Map<string, number>();
    for (const doors of meta.groupDoors) for (const d of doors) groupsAt.set(d, (groupsAt.get(d) ?? 0) + 1);
    const byReach = [...groupsAt.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
    for (const [label, [deviceId]] of [
      ["busiest door", byReach[0]!],
      ["median door", byReach[byReach.length >> 1]!],
    ] as const) {
      const found = engine.whoCanAccess(deviceId, { at: ats[0]! }).holders.length;
      let c = 0;
      const who = () => {
        sink.value += engine.whoCanAccess(deviceId, { at: ats[c]! }).holders.length;
        if (++c === ats.length) c = 0;
      };
      const r = await timeBatches(`who ${size} ${label}`, who, 1, timing);
      rows.push(
        batchRow(
          "who",
          size,
          `whoCanAccess(${label})`,
          r,
          `${groupsAt.get(deviceId)} groups reach it; ${found} holders allowed at the first instant`,
        ),
      );
      ctx.facts[`who.${size}.${label === "busiest door" ? "busiest" : "median"}.ns`] = r.meanNs;
    }
  }
  return rows;
}
