// JSON parsing for the adapters' boundaries (CLI files and lines, HTTP bodies): the value, or where the
// text stops being JSON as a line and a column with a fixed sentence. The message never quotes the
// input — JSON.parse's own message may ("Unexpected token 'x', "…" is not valid JSON"), and the
// input can hold a PIN — so it is made here from the position of the first error.

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
    };

/** Parses `text` as one JSON document (RFC 8259, as JSON.parse), or says where and why it is not JSON. */
export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    const e = jsonSyntaxError(text) ?? { offset: text.length, message: "not valid JSON" };
    return { ok: false, ...lineColumn(text, e.offset), offset: e.offset, message: e.message };
  }
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
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail(Math.min(i + 2, n), "invalid \\u escape in a string");
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
      fail(i, top === OBJECT ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array element");
      return error;
    }
  }
}

function commonPrefix(text: string, at: number, word: string): number {
  let k = 0;
  while (k < word.length && text[at + k] === word[k]) k++;
  return k;
}
