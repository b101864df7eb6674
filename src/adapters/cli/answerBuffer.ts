// The output of `rsop decide`: answer lines written as UTF-8 bytes into one buffer, taken whole and
// written once per chunk of input. A 2.0 decision's line is put together byte by byte from pieces
// encoded once (writeDecision), so a line makes no string: building each line as a string of ~20
// concatenated parts and joining the lines cost more per line than deciding (measured with
// `node --cpu-prof dist/cli.js decide` at M).
import type { Decision } from "../../model/index.js";

/** Bytes of ASCII text encoded once. */
function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

const LINE = ascii('{"line":');
const CREDENTIAL_ID = ascii(',"credentialId":');
const ACTIVE_RULE_ID = ascii(',"activeRuleId":');
const DURESS_FLOORS = ascii(',"duress":true,"floors":');
const NO_DURESS_FLOORS = ascii(',"duress":false,"floors":');
const FACILITY_CODE = ascii(',"facilityCode":');
const CREDENTIAL_NUMBER = ascii(',"credentialNumber":');
const NULL = ascii("null");
const QUOTE = 0x22;
const COMMA = 0x2c;
const NEWLINE = 0x0a;

/**
 * Answer lines as UTF-8 bytes, each ended by "\n". Grows as needed; `take` hands over what was
 * written and starts an empty buffer.
 * @example
 * const out = new AnswerBuffer();
 * out.line('{"line":1,"error":{}}');
 * out.take().toString(); //=> '{"line":1,"error":{}}\n'
 */
export class AnswerBuffer {
  #buf: Buffer;
  #n = 0;
  readonly #initial: number;

  constructor(initialBytes = 1 << 16) {
    this.#initial = initialBytes;
    this.#buf = Buffer.allocUnsafeSlow(initialBytes);
  }

  /** Bytes written since the last take. */
  get length(): number {
    return this.#n;
  }

  /** Appends one line: `text` (any string) and "\n". */
  line(text: string): void {
    this.#room(text.length * 3 + 1);
    this.#n += this.#buf.write(text, this.#n, "utf8");
    this.#buf[this.#n++] = NEWLINE;
  }

  /** Appends bytes as they are (lines already ended). */
  bytes(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#n);
    this.#n += b.length;
  }

  /**
   * What was written, as a buffer of its own (its memory is not reused: a stream may still hold it),
   * and an empty buffer for what comes next, about as large as this one needed.
   */
  take(): Buffer {
    const full = this.#buf.subarray(0, this.#n);
    this.#buf = Buffer.allocUnsafeSlow(Math.max(this.#initial, this.#n + (this.#n >> 2)));
    this.#n = 0;
    return full;
  }

  /**
   * Appends a 2.0 decision's answer line: exactly `{"line":N,` followed by the rest of
   * `JSON.stringify(d)`, and "\n". Room for the whole line is made once (its longest form: every id
   * escaped), then the pieces are written through locals.
   * @param line - the input line number.
   * @param d - the decision.
   * @param head - the bytes from `,"outcome"` to `"holderId":` of this decision (decisionHead).
   */
  decision(line: number, d: Decision, head: Uint8Array): void {
    const holderId = d.holderId;
    const credentialId = d.credentialId;
    const ruleId = d.activeRuleId;
    const floors = d.floors;
    let chars = (holderId?.length ?? 0) + (credentialId?.length ?? 0) + (ruleId?.length ?? 0);
    for (let i = 0; i < floors.length; i++) chars += floors[i]!.length;
    // A card number past 2^53−1 is a string of up to 155 digits (CN3): counted as an id is.
    if (typeof d.credentialNumber === "string") chars += d.credentialNumber.length;
    // Each id and floor: its characters at their longest, and 4 bytes (its quotes and comma, or null).
    this.#room(head.length + FIXED_BYTES + MAX_JSON_BYTES_PER_CHAR * chars + 4 * (floors.length + 3));
    const buf = this.#buf;
    let n = put(buf, this.#n, LINE);
    n = count(buf, n, line);
    n = put(buf, n, head);
    n = jsonString(buf, n, holderId);
    n = put(buf, n, CREDENTIAL_ID);
    n = jsonString(buf, n, credentialId);
    n = put(buf, n, ACTIVE_RULE_ID);
    n = jsonString(buf, n, ruleId);
    n = put(buf, n, d.duress ? DURESS_FLOORS : NO_DURESS_FLOORS);
    buf[n++] = 0x5b; // [
    for (let i = 0; i < floors.length; i++) {
      if (i > 0) buf[n++] = COMMA;
      n = jsonString(buf, n, floors[i]!);
    }
    buf[n++] = 0x5d; // ]
    n = put(buf, n, FACILITY_CODE);
    n = jsonNumber(buf, n, d.facilityCode);
    n = put(buf, n, CREDENTIAL_NUMBER);
    // A card number past 2^53−1 is its decimal string (CN3).
    n =
      typeof d.credentialNumber === "string"
        ? jsonString(buf, n, d.credentialNumber)
        : jsonNumber(buf, n, d.credentialNumber);
    buf[n++] = 0x7d; // }
    buf[n++] = NEWLINE;
    this.#n = n;
  }

  #room(bytes: number): void {
    if (this.#n + bytes <= this.#buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#buf.length * 2, this.#n + bytes));
    this.#buf.copy(grown, 0, 0, this.#n);
    this.#buf = grown;
  }
}

/**
 * The constant bytes of a decision's line besides its head, the line number's 16 digits at most,
 * and its two numbers at their longest (24 characters: String(-Number.MAX_VALUE)).
 */
const FIXED_BYTES =
  LINE.length +
  16 +
  CREDENTIAL_ID.length +
  ACTIVE_RULE_ID.length +
  NO_DURESS_FLOORS.length +
  FACILITY_CODE.length +
  CREDENTIAL_NUMBER.length +
  2 * 24 +
  4;
/** UTF-8 bytes of JSON.stringify's text per character of a string, at most: `\u001f` is six. */
const MAX_JSON_BYTES_PER_CHAR = 6;

/** Copies `b` into `buf` at `n` (the room is made); returns the position after it. */
function put(buf: Buffer, n: number, b: Uint8Array): number {
  for (let i = 0; i < b.length; i++) buf[n++] = b[i]!;
  return n;
}

/**
 * A JSON string (or null) into `buf` at `n` (room for its longest form is made): the characters
 * themselves when every one is printable ASCII needing no escape, else JSON.stringify's text.
 * Returns the position after it.
 */
function jsonString(buf: Buffer, n: number, s: string | null): number {
  if (s === null) return put(buf, n, NULL);
  const start = n;
  buf[n++] = QUOTE;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === QUOTE || c === 0x5c || c > 0x7e)
      // Escapes, or characters of more than one UTF-8 byte (a lone surrogate is escaped).
      return start + buf.write(JSON.stringify(s), start, "utf8");
    buf[n++] = c;
  }
  buf[n++] = QUOTE;
  return n;
}

/** A number as JSON.stringify writes it (null when not finite): digits of a non-negative safe integer directly. Returns the position after it. */
function jsonNumber(buf: Buffer, n: number, v: number | null): number {
  if (v === null || !Number.isFinite(v)) return put(buf, n, NULL);
  if (!Number.isSafeInteger(v) || v < 0) return n + buf.write(String(v), n, "latin1");
  return count(buf, n, v);
}

/** The decimal digits of a non-negative safe integer into `buf` at `n`; returns the position after them. */
function count(buf: Buffer, n: number, v: number): number {
  let digits = 1;
  for (let p = 10; p <= v; p *= 10) digits++;
  let at = n + digits;
  const end = at;
  do {
    const q = Math.floor(v / 10);
    buf[--at] = 0x30 + (v - q * 10);
    v = q;
  } while (v > 0);
  return end;
}

/**
 * The bytes of a decision's line from `,"outcome"` to `"holderId":`, one per reason: outcome and
 * topic follow from the reason (a decision pairing them otherwise gets bytes of its own).
 * @returns a function giving those bytes for a decision.
 * @example
 * const head = decisionHead();
 * new TextDecoder().decode(head(engine.decide(request))); //=> ',"outcome":"allowed","topic":"device.request.allowed","reason":"allowed","holderId":'
 */
export function decisionHead(): (d: Decision) => Uint8Array {
  const heads = new Map<string, { readonly outcome: string; readonly topic: string; readonly bytes: Uint8Array }>();
  return (d) => {
    let head = heads.get(d.reason);
    if (head === undefined || head.outcome !== d.outcome || head.topic !== d.topic) {
      const text = `,"outcome":${JSON.stringify(d.outcome)},"topic":${JSON.stringify(d.topic)},"reason":${JSON.stringify(d.reason)},"holderId":`;
      head = { outcome: d.outcome, topic: d.topic, bytes: new Uint8Array(Buffer.from(text, "utf8")) };
      heads.set(d.reason, head);
    }
    return head.bytes;
  };
}
