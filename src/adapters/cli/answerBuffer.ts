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
   * `JSON.stringify(d)`, and "\n".
   * @param line - the input line number.
   * @param d - the decision.
   * @param head - the bytes from `,"outcome"` to `"holderId":` of this decision (decisionHead).
   */
  decision(line: number, d: Decision, head: Uint8Array): void {
    const floors = d.floors;
    this.#put(LINE);
    this.#count(line);
    this.#put(head);
    this.#string(d.holderId);
    this.#put(CREDENTIAL_ID);
    this.#string(d.credentialId);
    this.#put(ACTIVE_RULE_ID);
    this.#string(d.activeRuleId);
    this.#put(d.duress ? DURESS_FLOORS : NO_DURESS_FLOORS);
    this.#room(2);
    this.#buf[this.#n++] = 0x5b; // [
    for (let i = 0; i < floors.length; i++) {
      if (i > 0) this.#buf[this.#n++] = COMMA;
      this.#string(floors[i]!);
      this.#room(2);
    }
    this.#buf[this.#n++] = 0x5d; // ]
    this.#put(FACILITY_CODE);
    this.#number(d.facilityCode);
    this.#put(CREDENTIAL_NUMBER);
    this.#number(d.credentialNumber);
    this.#room(2);
    this.#buf[this.#n++] = 0x7d; // }
    this.#buf[this.#n++] = NEWLINE;
  }

  #room(bytes: number): void {
    if (this.#n + bytes <= this.#buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.#buf.length * 2, this.#n + bytes));
    this.#buf.copy(grown, 0, 0, this.#n);
    this.#buf = grown;
  }

  #put(b: Uint8Array): void {
    this.#room(b.length);
    const buf = this.#buf;
    let n = this.#n;
    for (let i = 0; i < b.length; i++) buf[n++] = b[i]!;
    this.#n = n;
  }

  /** A JSON string (or null): the characters themselves when every one is printable ASCII needing no escape, else JSON.stringify's text. */
  #string(s: string | null): void {
    if (s === null) {
      this.#put(NULL);
      return;
    }
    this.#room(s.length + 2);
    const buf = this.#buf;
    const start = this.#n;
    let n = start;
    buf[n++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === QUOTE || c === 0x5c || c > 0x7e) {
        // Escapes, or characters of more than one UTF-8 byte (a lone surrogate is escaped).
        const json = JSON.stringify(s);
        this.#n = start;
        this.#room(json.length * 3);
        this.#n += this.#buf.write(json, this.#n, "utf8");
        return;
      }
      buf[n++] = c;
    }
    buf[n++] = QUOTE;
    this.#n = n;
  }

  /** A number as JSON.stringify writes it (null when not finite): digits of a non-negative safe integer directly. */
  #number(v: number | null): void {
    if (v === null || !Number.isFinite(v)) {
      this.#put(NULL);
      return;
    }
    if (!Number.isSafeInteger(v) || v < 0) {
      const text = String(v);
      this.#room(text.length);
      this.#n += this.#buf.write(text, this.#n, "utf8");
      return;
    }
    this.#count(v);
  }

  /** The decimal digits of a non-negative safe integer. */
  #count(v: number): void {
    this.#room(16);
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    const buf = this.#buf;
    let at = this.#n + digits;
    this.#n = at;
    do {
      const q = Math.floor(v / 10);
      buf[--at] = 0x30 + (v - q * 10);
      v = q;
    } while (v > 0);
  }
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
