// JSON parsing for the adapters' boundaries (CLI files and lines, HTTP bodies, snapshot files): the
// value, or where the text stops being JSON as a line and a column with a fixed sentence. The message
// never quotes the input — JSON.parse's own message may ("Unexpected token 'x', "…" is not valid
// JSON"), and the input can hold a PIN — so it is made here from the position of the first error.
// A document nested deeper than JSON_MAX_DEPTH arrays and objects is refused the same way, with
// the JSON path of the first value too deep (HJ1), before JSON.parse spends time on it.
import { JSON_MAX_DEPTH } from "../model/plainCopy.js";

export { JSON_MAX_DEPTH } from "../model/plainCopy.js";

export type JsonParse =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      /** 1-based line of the first error ("\n" ends a line). */
      readonly line: number;
      /** 1-based column (UTF-16 code units) of the first error on that line. */
      readonly column: number;
      /** 0-based offset of the first error in the text. */
      readonly offset: number;
      /** What was expected there, without any input text, e.g. "expected ',' or '}' after a property value". */
      readonly message: string;
      /** When the document nests too deep: the JSON path of the first array or object beyond the limit. */
      readonly path?: readonly (string | number)[];
    };

/** Options of parseJson. */
export interface ParseJsonOptions {
  /** Most nested arrays and objects, the document counting as one (default JSON_MAX_DEPTH, HJ1). */
  readonly maxDepth?: number;
}

/**
 * Parses `text` as one JSON document (RFC 8259, as JSON.parse), nested at most `maxDepth` arrays and
 * objects, or says where and why it is not such a document.
 */
export function parseJson(text: string, options: ParseJsonOptions = {}): JsonParse {
  const max = options.maxDepth ?? JSON_MAX_DEPTH;
  const deep = !bracketsAtMost(text, max) && nestsDeeper(text, max) ? tooDeepAt(text, max) : null;
  if (deep !== null) {
    // The first error in text order wins: a syntax error up to and including the bracket too deep.
    const e = jsonSyntaxError(text.slice(0, deep.offset + 1));
    if (e !== null && e.offset <= deep.offset)
      return { ok: false, ...lineColumn(text, e.offset), offset: e.offset, message: e.message };
    return {
      ok: false,
      ...lineColumn(text, deep.offset),
      offset: deep.offset,
      message: tooDeepText(max),
      path: deep.path,
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    const e = jsonSyntaxError(text) ?? { offset: text.length, message: "not valid JSON" };
    return { ok: false, ...lineColumn(text, e.offset), offset: e.offset, message: e.message };
  }
}

/**
 * Whether `text` holds at most `max` opening brackets, strings included: then nothing in it nests
 * deeper than `max`. Found with indexOf, far cheaper than nestsDeeper's walk for the short texts
 * most inputs are (a JSON Lines request has two or three).
 */
function bracketsAtMost(text: string, max: number): boolean {
  let count = 0;
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) if (++count > max) return false;
  for (let i = text.indexOf("["); i >= 0; i = text.indexOf("[", i + 1)) if (++count > max) return false;
  return true;
}

/**
 * Whether brackets outside strings nest deeper than `max` anywhere in `text`: one pass, no
 * allocation, stopping at the first bracket too deep (so a huge `[[[[…` costs only its first levels).
 * Not a syntax check: on text that is not JSON it may answer either way, and parseJson then asks
 * jsonSyntaxError, which finds the first error exactly.
 */
export function nestsDeeper(text: string, max: number): boolean {
  const n = text.length;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: the next quote not escaped by an odd run of backslashes.
      let j = text.indexOf('"', i + 1);
      for (;;) {
        if (j < 0) return false;
        let k = j - 1;
        while (text.charCodeAt(k) === 0x5c) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      i = j + 1;
      continue;
    }
    if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
    i++;
  }
  return false;
}

/** "line L, column C: message" for a failed parse. */
export function jsonErrorText(r: { readonly line: number; readonly column: number; readonly message: string }): string {
  return `line ${r.line}, column ${r.column}: ${r.message}`;
}

/** 1-based line and column of a 0-based offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** The fixed description of a document nested too deep (HJ1). */
export function tooDeepText(max: number): string {
  return `nested deeper than ${max} arrays and objects`;
}

/**
 * The offset and JSON path of the first `[` or `{` of `text` nested deeper than `max`, or null: one
 * pass keeping each open container's key or index. It trusts the text up to there to be JSON
 * (parseJson checks that with jsonSyntaxError), so it only tells keys from values.
 */
export function tooDeepAt(text: string, max: number): { offset: number; path: (string | number)[] } | null {
  const path: (string | number)[] = [];
  /** Per open container: an object's next string is a key. */
  const inObject: boolean[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const from = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      if (expectKey) path[path.length - 1] = JSON.parse(text.slice(from, i + 1)) as string;
      expectKey = false;
    } else if (c === "[" || c === "{") {
      if (path.length >= max) return { offset: i, path };
      path.push(0);
      inObject.push(c === "{");
      expectKey = c === "{";
    } else if (c === "]" || c === "}") {
      path.pop();
      inObject.pop();
      // A value just ended (an empty `{}` never met its key): the next string is a value, not a key.
      expectKey = false;
    } else if (c === ",") {
      if (inObject.at(-1) === true) expectKey = true;
      else if (path.length > 0) (path[path.length - 1] as number)++;
    }
  }
  return null;
}

const ARRAY = 0;
const OBJECT = 1;

/**
 * The offset and a fixed description of the first syntax error of `text`, or null if it is one JSON
 * document. Iterative (an explicit stack), so deep nesting cannot overflow the call stack.
 */
export function jsonSyntaxError(text: string): { offset: number; message: string } | null {
  const n = text.length;
  const stack: number[] = [];
  let i = 0;
  let error: { offset: number; message: string } | null = null;
  const fail = (offset: number, message: string): false => {
    error = { offset, message: offset >= n ? "unexpected end of input" : message };
    return false;
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const digits = (): number => {
    const from = i;
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
    return i - from;
  };
  const string = (): boolean => {
    i++; // the opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return fail(i, "control character in a string (escape it)");
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
            return fail(Math.min(i + 2, n), "invalid \\u escape in a string");
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return fail(i + 1, "invalid escape in a string");
      } else i++;
    }
    return fail(n, "unterminated string");
  };
  const number = (): boolean => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else if (digits() === 0) return fail(i, "invalid number");
    if (text[i] === ".") {
      i++;
      if (digits() === 0) return fail(i, "invalid number: digits must follow the decimal point");
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (digits() === 0) return fail(i, "invalid number: digits must follow the exponent");
    }
    return true;
  };
  /** A string, number or literal; false on an error. */
  const scalar = (): boolean => {
    const c = text[i];
    if (c === '"') return string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    for (const word of ["true", "false", "null"])
      if (c === word[0]) {
        if (text.startsWith(word, i)) {
          i += word.length;
          return true;
        }
        return fail(i + commonPrefix(text, i, word), "expected a value");
      }
    return fail(i, "expected a value");
  };
  /** A property name and its colon. */
  const key = (): boolean => {
    ws();
    if (text[i] !== '"') return fail(i, "expected a double-quoted property name");
    if (!string()) return false;
    ws();
    if (text[i] !== ":") return fail(i, "expected ':' after a property name");
    i++;
    return true;
  };

  let needValue = true;
  for (;;) {
    ws();
    if (needValue) {
      const c = text[i];
      if (c === "{" || c === "[") {
        i++;
        ws();
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++;
          needValue = false;
        } else {
          stack.push(c === "{" ? OBJECT : ARRAY);
          if (c === "{" && !key()) return error;
        }
      } else if (scalar()) needValue = false;
      else return error;
      continue;
    }
    const top = stack.at(-1);
    if (top === undefined) return i < n ? { offset: i, message: "unexpected text after the JSON value" } : null;
    const c = text[i];
    if (c === ",") {
      i++;
      if (top === OBJECT && !key()) return error;
      needValue = true;
    } else if (c === (top === OBJECT ? "}" : "]")) {
      i++;
      stack.pop();
    } else {
      fail(
        i,
        top === OBJECT ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array element",
      );
      return error;
    }
  }
}

function commonPrefix(text: string, at: number, word: string): number {
  let k = 0;
  while (k < word.length && text[at + k] === word[k]) k++;
  return k;
}
