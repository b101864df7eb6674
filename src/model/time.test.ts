import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { daysFromCivil, parseInstant } from "./time.js";

const pad = (n: number, w: number) => String(n).padStart(w, "0");

describe("parseInstant", () => {
  it("reads any instant of years 0001–9999 written with Z, and 1–9 fraction digits as truncated milliseconds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse("0001-01-01T00:00:00Z"), max: Date.parse("9999-12-31T23:59:59.999Z") }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 0, max: 999_999 }),
        (ms, digits, extra) => {
          const d = new Date(ms);
          const whole = ms - d.getUTCMilliseconds();
          const base = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
          // Nine digits: the milliseconds, then six more that must not change the result.
          const nine = `${pad(d.getUTCMilliseconds(), 3)}${pad(extra, 6)}`;
          const fraction = digits === 0 ? "" : `.${nine.slice(0, digits)}`;
          const expected = whole + (digits === 0 ? 0 : Number(nine.slice(0, Math.min(digits, 3)).padEnd(3, "0")));
          expect(parseInstant(`${base}${fraction}Z`)).toBe(expected);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("agrees with the day-number formula on every day of 1890–2210 (the table covers 1900–2199)", () => {
    for (let day = daysFromCivil(1890, 1, 1); day < daysFromCivil(2210, 1, 1); day++) {
      const iso = new Date(day * 86_400_000).toISOString();
      expect(parseInstant(iso)).toBe(day * 86_400_000);
    }
  });

  it("refuses an empty fraction, ten fraction digits, February 29th of a common year and a missing offset", () => {
    for (const s of [
      "2026-01-01T00:00:00.Z",
      "2026-01-01T00:00:00.1234567890Z",
      "2100-02-29T00:00:00Z",
      "2026-01-01T00:00:00",
    ]) {
      expect(parseInstant(s), s).toBeNaN();
    }
    expect(parseInstant("2000-02-29T00:00:00Z")).toBe(Date.UTC(2000, 1, 29));
    expect(parseInstant("2026-03-01T00:30:00.5+01:00")).toBe(Date.UTC(2026, 1, 28, 23, 30, 0, 500));
  });

  it("accepts what ISO 8601 also allows: a lower-case t and z, and a comma as the decimal sign (R2)", () => {
    expect(parseInstant("2026-03-07t10:59:59z")).toBe(Date.UTC(2026, 2, 7, 10, 59, 59));
    expect(parseInstant("2026-03-07T10:59:59,25Z")).toBe(Date.UTC(2026, 2, 7, 10, 59, 59, 250));
    expect(parseInstant("2026-03-07t05:59:59,123456789-05:00")).toBe(Date.UTC(2026, 2, 7, 10, 59, 59, 123));
    for (const s of ["2026-03-07T10:59:59,Z", "2026-03-07 10:59:59Z", "2026-03-07x10:59:59Z", "2026-03-07T10:59:59y"])
      expect(parseInstant(s), s).toBeNaN();
  });
});
