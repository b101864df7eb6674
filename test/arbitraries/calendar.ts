// Calendars (docs/semantics.md C1, C2) for the property suites: a few calendars dense enough that a
// request's day is often one of theirs — many yearly month-days (February 29 among them), the days
// around the zones' DST changes, random dates of the generated span — and, per rule, a calendar to
// follow (exclude or only) or none. Opt-in (`snapshotAndRequestsArb({ calendars: true })`): the 1.0
// panel has no calendars, so the suites that convert a snapshot to 1.0 draw none.
import fc from "fast-check";
import { formatDay } from "./localTime.js";
import { dayArb } from "./window.js";
import { ZONES, dstTransitions } from "./zone.js";

const DAY = 86_400_000;
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export interface CalendarSpec {
  /** Yearly month-days as day-of-leap-year picks (0…365: 59 is February 29). */
  readonly yearly: number[];
  /** Dates: days of the generated span, and picks among the days around DST changes. */
  readonly days: number[];
  readonly dstPicks: number[];
  readonly partitioned: boolean;
}

/** A rule's calendar: which one (mod the count) and how the rule follows it. */
export interface RuleCalendarSpec {
  readonly pick: number;
  readonly mode: "exclude" | "only";
}

export const calendarSpecArb: fc.Arbitrary<CalendarSpec> = fc.record({
  yearly: fc.oneof(
    fc.array(fc.nat(365), { maxLength: 4 }),
    fc.array(fc.nat(365), { minLength: 60, maxLength: 200 }),
    fc.constant(null).map((): number[] => [59]),
  ),
  days: fc.array(dayArb, { maxLength: 30 }),
  dstPicks: fc.array(fc.nat(), { maxLength: 12 }),
  partitioned: fc.boolean(),
});

export const calendarsArb: fc.Arbitrary<CalendarSpec[]> = fc.array(calendarSpecArb, { minLength: 1, maxLength: 2 });

export const ruleCalendarArb: fc.Arbitrary<RuleCalendarSpec | null> = fc.option(
  fc.record({ pick: fc.nat(), mode: fc.constantFrom("exclude" as const, "only" as const) }),
  { freq: 3, nil: null },
);

/** {month, day} of a day-of-leap-year pick. */
function monthDay(pick: number): { month: number; day: number } {
  let d = pick;
  for (let m = 0; m < 12; m++) {
    if (d < MONTH_DAYS[m]!) return { month: m + 1, day: d + 1 };
    d -= MONTH_DAYS[m]!;
  }
  return { month: 12, day: 31 };
}

/** Local days around every DST change of the generated zones in the span (the day before, of, after). */
const DST_DAYS: readonly number[] = [
  ...new Set(ZONES.flatMap((z) => dstTransitions(z).flatMap((t) => [-1, 0, 1].map((k) => Math.floor(t / DAY) + k)))),
].sort((a, b) => a - b);

/** Calendar JSON of a spec: `cal-<k>`, in partition `partitionId` when it has one and the spec asks. */
export function buildCalendar(spec: CalendarSpec, k: number, partitionId: string | null): Record<string, unknown> {
  const dates = [...spec.days, ...spec.dstPicks.map((p) => DST_DAYS[p % DST_DAYS.length]!)].map(formatDay);
  const cal: Record<string, unknown> = {
    id: `cal-${k}`,
    name: `Calendar ${k}`,
    dates,
    recurring: [...new Set(spec.yearly)].map(monthDay),
  };
  if (spec.partitioned && partitionId !== null) cal.partition = partitionId;
  return cal;
}
