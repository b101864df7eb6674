// Scenario: diffAccess of two snapshots that differ by one group's rules (every rule of the group
// with the most rules closes an hour earlier), over a week: the change reaches that group's members
// × the doors and floor groups of its rules, and only those pairs are evaluated (allowed time before
// and after, DST-correct). The after-engine is compiled outside the measured time.
import { type Engine, type Rule, type SystemSnapshot, createEngine, diffAccess } from "../src/index.js";
import { type Row, fmtMs, log, median, timeRuns } from "./benchUtil.js";
import { fixture } from "./fixtures.js";
import type { ScenarioContext } from "./scenario.js";

const WEEK = { from: "2026-03-02T00:00:00Z", to: "2026-03-09T00:00:00Z" }; // holds the US change to daylight time

/** An hour earlier, wrapping at midnight. */
function hourEarlier(t: string): string {
  const h = Number(t.slice(0, 2));
  return `${String((h + 23) % 24).padStart(2, "0")}${t.slice(2)}`;
}

/** The snapshot with every rule of `groupId` closing an hour earlier (a rule whose stop would meet its start is kept as it is). */
function changeGroup(s: SystemSnapshot, groupId: string): SystemSnapshot {
  const rules = s.rules.map((r): Rule => {
    if (r.groupId !== groupId) return r;
    const stop = r.stopTime === "24:00:00" ? "23:00:00" : hourEarlier(r.stopTime);
    return stop === r.startTime ? r : { ...r, stopTime: stop };
  });
  return { ...s, rules };
}

export async function run(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  for (const size of ctx.sizes) {
    const f = fixture(size);
    const before: Engine = f.engine;
    const s = before.snapshot;
    const count = new Map<string, number>();
    for (const r of s.rules) count.set(r.groupId, (count.get(r.groupId) ?? 0) + 1);
    const [groupId, ruleCount] = [...count].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
    const after = createEngine(changeGroup(s, groupId));
    const members = s.holders.filter((h) => h.groups.includes(groupId)).length;
    const targets = new Set(
      s.rules.filter((r) => r.groupId === groupId).flatMap((r) => (r.type === "elevator" ? r.floorGroups : r.devices)),
    ).size;
    let changes = 0;
    const runs = timeRuns(
      ctx.quick ? 2 : 5,
      () => null,
      () => {
        changes = diffAccess(before, after, WEEK).changes.length;
      },
    );
    const ms = median(runs);
    ctx.facts[`diff.${size}.ms`] = ms;
    log(`  diff ${size}: ${ms.toFixed(1)} ms (${members} members × ${targets} doors/floor groups, ${changes} changes)`);
    rows.push({
      section: "diff",
      size,
      name: "diffAccess, one group's rules changed, a week",
      value: fmtMs(ms),
      note: `median of ${runs.length} (fastest ${fmtMs(runs[0]!)}); group ${groupId}: ${ruleCount} rules, ${members} members × ${targets} doors/floor groups reached = ${members * targets} pairs; ${changes} changed; of ${s.holders.length.toLocaleString("en-US")} holders × ${s.devices.length.toLocaleString("en-US")} devices`,
    });
  }
  return rows;
}
