// The adapters' JSON parse: a line and column with a fixed sentence, never the input's own text.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { jsonErrorText, jsonSyntaxError, parseJson } from "../../src/adapters/jsonSyntax.js";

describe("parseJson", () => {
  test("a valid document parses as JSON.parse does", () => {
    expect(parseJson(' {"a": [1, -2.5e3, true, null, "x\\u00e9\\n"]} ')).toEqual({ ok: true, value: { a: [1, -2.5e3, true, null, "x\u00e9\n"] } });
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
    const fixed = /^(unexpected end of input|expected a value|expected a double-quoted property name|expected ':' after a property name|expected ',' or '\}' after a property value|expected ',' or '\]' after an array element|unexpected text after the JSON value|control character in a string \(escape it\)|invalid (\\u )?escape in a string|invalid \\u escape in a string|invalid number(: digits must follow the (decimal point|exponent))?)$/;
    // Valid JSON with a few characters changed, dropped or added: mostly near-misses.
    const mutated = fc
      .tuple(fc.json(), fc.array(fc.tuple(fc.nat(), fc.constantFrom("", "{", "}", "[", "]", ",", ":", '"', "\\", "-", ".", "e", "0", "1", "t", "n", " ", "\n", "\u0001", "x")), { maxLength: 3 }))
      .map(([json, edits]) => edits.reduce((s, [at, ch]) => { const k = s.length === 0 ? 0 : at % (s.length + 1); return s.slice(0, k) + ch + s.slice(k + (ch === "" ? 1 : 0)); }, json));
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
