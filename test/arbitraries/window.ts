// Rule time windows (SPEC §4): daily windows in local wall-clock time, including overnight
// (start > stop), 24-hour (start = stop) and 00:00:00–24:00:00 windows, windows whose edges sit on
// DST change times, random weekday subsets and optional start/end dates.
import fc from "fast-check";
import { formatClock, formatDay } from "./localTime.js";
import { SPAN_END, SPAN_START } from "./zone.js";

export const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The window fields of a rule, as snapshot input. */
export interface WindowInput {
  startTime: string;
  stopTime: string;
  recurring: Weekday[];
  startDate?: string | null;
  endDate?: string | null;
}

const DAY = 86_400_000;
const FIRST_DAY = SPAN_START / DAY;
const LAST_DAY = SPAN_END / DAY - 1;

/** Clock times (seconds since midnight) where the zones of zone.ts change offset (00:00–04:00, 23:00), and round hours. */
const EDGE_SECONDS = [
  0,
  1800,
  3600,
  5400,
  7200,
  9000,
  10800,
  4 * 3600,
  6 * 3600,
  9 * 3600,
  12 * 3600,
  17 * 3600,
  22 * 3600,
  23 * 3600,
  84_600,
  86_399,
];

/** Seconds since midnight, 0…86399: any second, or one near a DST change or a round hour. */
export const clockSecondsArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 86_399 }) },
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_SECONDS) },
);

/** A local calendar day number within the generated span. */
export const dayArb: fc.Arbitrary<number> = fc.integer({ min: FIRST_DAY, max: LAST_DAY });

const recurringArb: fc.Arbitrary<Weekday[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null).map((): Weekday[] => [...WEEKDAYS]) },
  { weight: 5, arbitrary: fc.shuffledSubarray([...WEEKDAYS], { minLength: 1 }) },
  { weight: 1, arbitrary: fc.constant(null).map((): Weekday[] => []) },
);

type Shape = "sameDay" | "overnight" | "allDay" | "fullDay" | "untilMidnight" | "always";

const shapeArb: fc.Arbitrary<Shape> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<Shape>("sameDay") },
  { weight: 3, arbitrary: fc.constant<Shape>("overnight") },
  { weight: 1, arbitrary: fc.constant<Shape>("allDay") },
  { weight: 2, arbitrary: fc.constant<Shape>("fullDay") },
  { weight: 1, arbitrary: fc.constant<Shape>("untilMidnight") },
  // 24x7 (SPEC §4): every day, all day; what offline policy 1 looks for.
  { weight: 2, arbitrary: fc.constant<Shape>("always") },
);

/** Optional inclusive start/end dates; `undefined` leaves the key out. */
const datesArb: fc.Arbitrary<{ startDate?: string | null; endDate?: string | null }> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constant({ startDate: null, endDate: null }) },
  { weight: 1, arbitrary: dayArb.map((d) => ({ startDate: formatDay(d) })) },
  { weight: 1, arbitrary: dayArb.map((d) => ({ endDate: formatDay(d) })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(dayArb, fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 800 })))
      .map(([d, len]) => ({ startDate: formatDay(d), endDate: formatDay(Math.min(d + len, LAST_DAY)) })),
  },
);

/** A rule window: times, weekdays and sometimes dates. */
export const windowArb: fc.Arbitrary<WindowInput> = fc
  .record({ shape: shapeArb, a: clockSecondsArb, b: clockSecondsArb, recurring: recurringArb, dates: datesArb })
  .map(({ shape, a, b, recurring, dates }) => {
    let start: number;
    let stop: number;
    switch (shape) {
      case "sameDay":
        start = Math.min(a, b);
        stop = Math.max(a, b);
        if (start === stop) stop = start + 1;
        break;
      case "overnight":
        start = Math.max(a, b);
        stop = Math.min(a, b);
        if (start === stop) start = stop === 86_399 ? stop : stop + 1;
        if (start === stop) stop = stop - 1;
        break;
      case "allDay":
        start = a;
        stop = a;
        break;
      case "fullDay":
        start = 0;
        stop = 86_400;
        break;
      case "untilMidnight":
        start = a;
        stop = 86_400;
        break;
      case "always":
        start = a % 2 === 0 ? 0 : a;
        stop = a % 2 === 0 ? 86_400 : a;
        return { startTime: formatClock(start), stopTime: formatClock(stop), recurring: [...WEEKDAYS], ...dates };
    }
    return { startTime: formatClock(start), stopTime: formatClock(stop), recurring, ...dates };
  });
