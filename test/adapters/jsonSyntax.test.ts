// The adapters' JSON parse: a line and column with a fixed sentence, never the input's own text.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { jsonErrorText, jsonSyntaxError, parseJson, tooDeepAt } from "../../src/adapters/jsonSyntax.js";

describe("parseJson", () => {
  test("a valid document parses as JSON.parse does", () => {
    expect(parseJson(' {"a": [1, -2.5e3, true, null, "x\\u00e9\\n"]} ')).toEqual({
      ok: true,
      value: { a: [1, -2.5e3, true, null, "x\u00e9\n"] },
    });
  });

  test.each([
    ['{"a":1,}', 1, 8, "expected a double-quoted property name"],
    ["abc", 1, 1, "expected a value"],
    ['{"pin": "1234" 9}', 1, 16, "expected ',' or '}' after a property value"],
    ['{"a":', 1, 6, "unexpected end of input"],
    ["", 1, 1, "unexpected end of input"],
    ["[1 2]", 1, 4, "expected ',' or ']' after an array element"],
    ['{"a":"b\nc"}', 1, 8, "control character in a string (escape it)"],
    ["01", 1, 2, "unexpected text after the JSON value"],
    ['{\n  "deviceId": "d1",\n  "at": tru\n}', 3, 12, "expected a value"],
    ['{"a":1}\n{"b":2}', 2, 1, "unexpected text after the JSON value"],
    ['"\\x"', 1, 3, "invalid escape in a string"],
    ["1.", 1, 3, "unexpected end of input"],
    ["1.e5", 1, 3, "invalid number: digits must follow the decimal point"],
  ])("%j: line %i, column %i, %s", (text, line, column, message) => {
    expect(parseJson(text)).toMatchObject({ ok: false, line, column, message });
  });

  test("the message never quotes the input (a PIN in a broken line stays out of it)", () => {
    const r = parseJson('{"deviceId": "d1", "pin": "824613", oops}');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(jsonErrorText(r)).toBe("line 1, column 37: expected a double-quoted property name");
      expect(jsonErrorText(r)).not.toContain("824613");
    }
  });

  test("deep nesting does not overflow the stack", () => {
    expect(jsonSyntaxError("[".repeat(200_000))).toEqual({ offset: 200_000, message: "unexpected end of input" });
    expect(jsonSyntaxError(`${"[".repeat(200_000)}${"]".repeat(200_000)}`)).toBeNull();
  });

  test("property: an error is found exactly when JSON.parse throws; messages are from the fixed list", () => {
    const fixed =
      /^(unexpected end of input|expected a value|expected a double-quoted property name|expected ':' after a property name|expected ',' or '\}' after a property value|expected ',' or '\]' after an array element|unexpected text after the JSON value|control character in a string \(escape it\)|invalid (\\u )?escape in a string|invalid \\u escape in a string|invalid number(: digits must follow the (decimal point|exponent))?)$/;
    // Valid JSON with a few characters changed, dropped or added: mostly near-misses.
    const mutated = fc
      .tuple(
        fc.json(),
        fc.array(
          fc.tuple(
            fc.nat(),
            fc.constantFrom(
              "",
              "{",
              "}",
              "[",
              "]",
              ",",
              ":",
              '"',
              "\\",
              "-",
              ".",
              "e",
              "0",
              "1",
              "t",
              "n",
              " ",
              "\n",
              "\u0001",
              "x",
            ),
          ),
          { maxLength: 3 },
        ),
      )
      .map(([json, edits]) =>
        edits.reduce((s, [at, ch]) => {
          const k = s.length === 0 ? 0 : at % (s.length + 1);
          return s.slice(0, k) + ch + s.slice(k + (ch === "" ? 1 : 0));
        }, json),
      );
    fc.assert(
      fc.property(fc.oneof(mutated, fc.string()), (text) => {
        let throws = false;
        try {
          JSON.parse(text);
        } catch {
          throws = true;
        }
        const e = jsonSyntaxError(text);
        expect(e !== null).toBe(throws);
        if (e !== null) {
          expect(e.message).toMatch(fixed);
          expect(e.offset).toBeGreaterThanOrEqual(0);
          expect(e.offset).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 10_000 },
    );
  });
});

describe("HJ1 parseJson's depth limit (64 arrays and objects, the document being the first)", () => {
  const nest = (n: number, inner = "1") => "[".repeat(n) + inner + "]".repeat(n);

  test("HJ1 64 levels parse; 65 are refused at the 65th bracket with its path; brackets inside strings do not count", () => {
    expect(parseJson(nest(64)).ok).toBe(true);
    expect(parseJson(nest(65))).toEqual({
      ok: false,
      line: 1,
      column: 65,
      offset: 64,
      message: "nested deeper than 64 arrays and objects",
      path: Array(64).fill(0),
    });
    expect(parseJson(`["[[[[", ${nest(63, '"]]]]\\\\"')}]`).ok).toBe(true);
    const keyed = `{"a\\"b": [1, {"x": 2, "y\\u0041": ${nest(70)}}]}`;
    const r = parseJson(keyed, { maxDepth: 10 });
    expect(r).toMatchObject({
      ok: false,
      message: "nested deeper than 10 arrays and objects",
      path: ['a"b', 1, "yA", ...Array(7).fill(0)],
    });
    expect(parseJson(keyed, { maxDepth: 100 }).ok).toBe(true);
  });

  test("HJ1 a syntax error before the bracket too deep, or at it, is the error; half a million brackets stop at the 65th", () => {
    expect(parseJson(`[1 2, ${nest(100)}]`)).toMatchObject({
      ok: false,
      column: 4,
      message: "expected ',' or ']' after an array element",
    });
    expect(parseJson(`${"[".repeat(64)}1 [`)).toMatchObject({
      ok: false,
      offset: 66,
      message: "expected ',' or ']' after an array element",
    });
    expect(parseJson(`${"[".repeat(64)}[`)).toMatchObject({ ok: false, offset: 64, path: Array(64).fill(0) });
    const t0 = performance.now();
    const big = parseJson("[".repeat(500_000));
    expect(big).toMatchObject({ ok: false, offset: 64, path: Array(64).fill(0) });
    expect(performance.now() - t0).toBeLessThan(5_000); // a bound on the test, not a performance claim
  });

  test('HJ1 the path counts array elements after an empty object: [{"":[{},"",{"":{}}]},3] at 4 levels is refused at 0."".2."" (a shrunk counterexample, seed -730575111)', () => {
    const text = JSON.stringify([{ "": [{}, "", { "": {} }] }, 3]);
    const r = parseJson(text, { maxDepth: 4 });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.path).toEqual([0, "", 2, ""]);
  });

  test("HJ1 property: parseJson refuses exactly the documents deeper than the limit, at the path of the first array or object too deep", () => {
    const depthOf = (v: unknown): number =>
      v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 8 }), (value, max) => {
        const text = JSON.stringify(value, null, max % 2 === 0 ? 2 : 0);
        const r = parseJson(text, { maxDepth: max });
        expect(r.ok).toBe(depthOf(value) <= max);
        if (!r.ok) {
          expect(r.path!.length).toBe(max);
          let at: unknown = value;
          for (const k of r.path!) at = (at as Record<string | number, unknown>)[k];
          expect(typeof at === "object" && at !== null).toBe(true);
          expect(tooDeepAt(text, max)?.offset).toBe(r.offset);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
