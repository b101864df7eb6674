// Decisions without a request object: a reader handle (one device, resolved once, its scans as plain
// arguments) and columnar batches (typed arrays in, typed arrays out). Both check their arguments as
// checkRequest would check the equivalent request, then run decideCore, decide's own rule walk, so
// that every answer is the one decide gives (test/property/reader.property.test.ts). Hot path: no
// luxon/Intl, no string building, no closures, no allocation beyond the decision (none with `out`,
// none per row in a batch). docs/semantics.md, "Reader handles and batches" (RH1–RH8).
import {
  CARD_STRIDE,
  type CompiledDevice,
  type CompiledSystem,
  HOLDER_STRIDE,
  H_GROUP_FROM,
  WIDE,
  cardHash,
  findCard,
} from "../compile/index.js";
import {
  type Decision,
  type InputType,
  MAX_FRAME_BITS,
  MAX_INSTANT,
  MIN_INSTANT,
  type CardNumber,
  cardNumberValue,
  isCardNumber,
  isCount,
  isDigits,
} from "../model/index.js";
import {
  C_BAD_REQUEST,
  C_UNKNOWN_DEVICE,
  KIND_MOBILE,
  KIND_NONE,
  KIND_NUMBER,
  KIND_WIEGAND,
  OUTCOME_OF_REASON,
  ARG_AT,
  NUMBERS,
  ONLINE,
  LAST_RULE,
  WIDE_ARG,
  decideCore,
  exitEmpty,
  inputBit,
  newDecision,
} from "./decide.js";

/** Where a handle finds the compiled system: the engine, whose `compiled_` follows every update. */
export interface CompiledSource {
  readonly compiled_: CompiledSystem;
}

/** How a reader is wired, fixed for its handle. */
export interface ReaderOptions {
  /** The channel its scans come in on, as a request's `input`; default `wiegand`. */
  readonly input?: InputType;
}

const NO_BITS: Uint8Array = new Uint8Array(0);

/** A facility code argument: null or undefined for none, else a count. */
function isFacility(v: unknown): boolean {
  return v === null || v === undefined || isCount(v);
}

/** A Wiegand frame as a request's `wiegand` string is, one element per character: 9 to 512 of 0 and 1. */
function isFrame(bits: unknown): boolean {
  if (!(bits instanceof Uint8Array)) return false;
  const n = bits.length;
  if (n < 9 || n > MAX_FRAME_BITS) return false;
  // One OR over the frame, no branch per bit: a frame is mostly valid.
  let any = 0;
  for (let i = 0; i < n; i++) any |= bits[i]!;
  return any <= 1;
}

/**
 * decideCore's `cn` for a valid card number: the number, or WIDE with the decimal string of a value
 * past 2^53−1 parked in WIDE_ARG (CN2); a string of a safe value is that number.
 */
function wideOrNumber(n: CardNumber): number {
  if (typeof n === "number") return n;
  const v = cardNumberValue(n);
  if (typeof v === "number") return v;
  WIDE_ARG.wide_ = v;
  return WIDE;
}

/** decideCore's `cn` for a card number given as a string (wideOrNumber), -1 when it is no card number. */
function stringCard(v: unknown): number {
  return isCardNumber(v) ? wideOrNumber(v as string) : -1;
}

/** A malformed scan: `denied/badRequest` in `d`. */
function refuse(d: Decision, sys: CompiledSystem): Decision {
  exitEmpty(d, sys, C_BAD_REQUEST);
  return d;
}

/** The INPUT_BIT of a handle's `input` option; 0 when it is not one (every scan is then badRequest, RH2). */
function optionInput(options: ReaderOptions | undefined): number {
  const input = options === undefined || options === null ? undefined : (options.input as unknown);
  if (input === undefined || input === "wiegand" || input === "unencryptedOsdp" || input === "encryptedOsdp")
    return inputBit(input);
  return 0;
}

/**
 * One reader's scans, decided like `decide` without a request: the device is found once, the scan's
 * fields are plain arguments, the instant is epoch ms. Every method fills `out` when given (else a
 * fresh decision) and returns it, exactly the decision decide returns for the equivalent request
 * (`{ deviceId, at: atMs, credential, pin, input }`, node online). Never throws.
 *
 * A handle stays valid while its engine changes (Engine.update, a live system's writes): each call
 * reads the engine's current compiled system, and after a change looks its device up again (once).
 * A device removed later answers `denied/unknownDevice` until one with its id exists again.
 * @example
 * const door = engine.reader("door-ward-3");
 * door?.card(1001, 42, Date.parse("2026-04-15T14:15:00Z")).outcome; //=> "allowed" | "denied" | "unknown"
 */
export class ReaderHandle {
  /** The device id this handle decides for. */
  readonly deviceId: string;
  /** @internal */
  readonly source_: CompiledSource;
  /** @internal The compiled system `device_` was looked up in. */
  sys_: CompiledSystem;
  /** @internal null: no device with this id (any more). */
  device_: CompiledDevice | null;
  /** @internal INPUT_BIT of the `input` option; 0: not a valid input. */
  readonly input_: number;

  /** @internal Use Engine.reader. */
  constructor(source: CompiledSource, device: CompiledDevice, options?: ReaderOptions) {
    this.deviceId = device.id;
    this.source_ = source;
    this.sys_ = source.compiled_;
    this.device_ = device;
    this.input_ = optionInput(options);
  }

  /** @internal The compiled system now, with `device_` looked up in it. */
  private current_(): CompiledSystem {
    const sys = this.source_.compiled_;
    if (sys !== this.sys_) {
      this.sys_ = sys;
      this.device_ = sys.deviceIndex_.get(this.deviceId) ?? null;
    }
    return sys;
  }

  /**
   * A card read as a number: `{ credential: { credentialNumber, facilityCode } }`.
   * @param cardNumber - the credential number: a non-negative safe integer, or a decimal string (any
   *   value up to 2^512−1, CN2).
   * @param facilityCode - the facility code, or null when the reader gives none.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.card(1001, null, Date.now()).reason; //=> e.g. "allowed"
   */
  card(cardNumber: CardNumber, facilityCode: number | null, atMs: number, out?: Decision): Decision {
    // Each method only parks the instant in NUMBERS and calls on: small enough for V8 to inline it
    // where it is called, so that the double is stored, not boxed into an argument.
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_NUMBER, cardNumber, facilityCode, null, null, null, null, out);
  }

  /**
   * A raw Wiegand frame: `{ credential: { wiegand } }`, the frame given as its bits, `bits[i]` (0 or
   * 1) being character i of the request's `wiegand` string. The array is read, not kept.
   * @param bits - 9 to 512 elements, each 0 or 1.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.wiegand(Uint8Array.from("00000001000000000000000010", (c) => +c), Date.now()).facilityCode; //=> 2
   */
  wiegand(bits: Uint8Array, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_WIEGAND, null, null, bits, null, null, null, out);
  }

  /**
   * A raw Wiegand frame and a PIN: `{ credential: { wiegand }, pin }` (a null PIN is no PIN, as in a
   * request), as a card-and-keypad reader sends them.
   * @param bits - 9 to 512 elements, each 0 or 1.
   * @param pin - the digits entered.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.wiegandAndPin(Uint8Array.from("00000001000000000000000010", (c) => +c), "4711", Date.now()).facilityCode; //=> 2
   */
  wiegandAndPin(bits: Uint8Array, pin: string, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_WIEGAND, null, null, bits, pin, null, null, out);
  }

  /**
   * A PIN alone: `{ pin }`.
   * @param pin - the digits entered.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.pin("4711", Date.now()).reason; //=> e.g. "unknownPin"
   */
  pin(pin: string, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_NONE, null, null, null, pin, null, null, out);
  }

  /**
   * A card read as a number and a PIN: `{ credential: { credentialNumber, facilityCode }, pin }`
   * (a null PIN is no PIN, as in a request).
   * @param cardNumber - the credential number, as for `card`.
   * @param facilityCode - the facility code, or null.
   * @param pin - the digits entered.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.cardAndPin(1001, 42, "4711", Date.now()).duress; //=> false
   */
  cardAndPin(cardNumber: CardNumber, facilityCode: number | null, pin: string, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_NUMBER, cardNumber, facilityCode, null, pin, null, null, out);
  }

  /**
   * A mobile credential: `{ credential: { mobile: kind, credentialId } }`.
   * @param kind - `touch` (BLE) or `token`.
   * @param credentialId - the credential's id.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.mobile("token", "cred-0001-m", Date.now()).credentialId; //=> "cred-0001-m" (when it is known)
   */
  mobile(kind: "touch" | "token", credentialId: string, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_MOBILE, null, null, null, null, kind, credentialId, out);
  }

  /**
   * A mobile credential and a PIN: `{ credential: { mobile: kind, credentialId }, pin }` (a null PIN
   * is no PIN).
   * @param kind - `touch` (BLE) or `token`.
   * @param credentialId - the credential's id.
   * @param pin - the digits entered.
   * @param atMs - the instant, epoch ms.
   * @param out - a decision to fill instead of allocating one.
   * @returns the decision.
   * @example
   * door.mobileAndPin("token", "cred-0001-m", "4711", Date.now()).duress; //=> false
   */
  mobileAndPin(kind: "touch" | "token", credentialId: string, pin: string, atMs: number, out?: Decision): Decision {
    NUMBERS[ARG_AT] = typeof atMs === "number" ? atMs : Number.NaN;
    return this.scan_(KIND_MOBILE, null, null, null, pin, kind, credentialId, out);
  }

  /**
   * Every method's scan, after the method parked the instant in NUMBERS: the arguments of `kind`
   * checked as checkRequest checks the equivalent request, then decideCore. One function for all
   * seven (too large for V8 to inline), so that the methods themselves stay small enough to be inlined
   * where they are called.
   * @internal
   */
  private scan_(
    kind: number,
    cardNumber: unknown,
    facilityCode: unknown,
    bits: unknown,
    pin: unknown,
    mobile: unknown,
    credentialId: unknown,
    out: Decision | undefined,
  ): Decision {
    // The instant first, into a local: a check below could run a caller's code (a redefined
    // typed-array getter, say) that scans again and overwrites NUMBERS; it is put back last.
    const at = NUMBERS[ARG_AT]!;
    const d = out ?? newDecision();
    const sys = this.current_();
    let ok = this.input_ !== 0 && Number.isSafeInteger(at) && at >= MIN_INSTANT && at < MAX_INSTANT;
    let cn = -1;
    let fc = -1;
    let frame: Uint8Array = NO_BITS;
    let digits: string | null = null;
    let mobileBit = 0;
    let id: string | null = null;
    if (ok) {
      if (kind === KIND_NONE) {
        ok = isDigits(pin);
        if (ok) digits = pin as string;
      } else {
        // With a credential, a null PIN is no PIN, as a request's `pin: null` is.
        ok = pin === null || pin === undefined || isDigits(pin);
        if (ok && pin !== null && pin !== undefined) digits = pin as string;
        if (!ok) return refuse(d, sys);
        if (kind === KIND_NUMBER) {
          // A string number (CN2) takes its own call, so this path stays as it was for numbers.
          cn = isCount(cardNumber) ? (cardNumber as number) : stringCard(cardNumber);
          ok = cn !== -1 && isFacility(facilityCode);
          if (ok) fc = facilityCode === null || facilityCode === undefined ? -1 : (facilityCode as number);
        } else if (kind === KIND_WIEGAND) {
          ok = isFrame(bits);
          if (ok) frame = bits as Uint8Array;
        } else {
          ok =
            (mobile === "touch" || mobile === "token") && typeof credentialId === "string" && credentialId.length > 0;
          if (ok) {
            mobileBit = mobile === "touch" ? 2 : 4;
            id = credentialId as string;
          }
        }
      }
    }
    if (!ok) return refuse(d, sys);
    const device = this.device_;
    if (device === null) exitEmpty(d, sys, C_UNKNOWN_DEVICE);
    else {
      NUMBERS[ARG_AT] = at;
      decideCore(
        d,
        sys,
        device,
        this.input_,
        kind,
        frame,
        frame.length,
        cn,
        fc,
        mobileBit,
        id,
        digits,
        ONLINE,
        undefined,
      );
    }
    return d;
  }
}

/**
 * A handle for `deviceId` in `source`'s compiled system, or null when no device has that id.
 * @internal Engine.reader is the public way.
 */
export function readerHandle(source: CompiledSource, deviceId: string, options?: ReaderOptions): ReaderHandle | null {
  const device = typeof deviceId === "string" ? source.compiled_.deviceIndex_.get(deviceId) : undefined;
  return device === undefined ? null : new ReaderHandle(source, device, options);
}

/**
 * The columns of a batch of card scans, one row per scan: row i is the request
 * `{ deviceId, at: atMs[i], credential: { credentialNumber: card[i], facilityCode }, input }` where
 * `deviceId` is the device at index `device[i]` (Engine.deviceIndex) and `facilityCode` is
 * `facility[i]`, or null when that is -1. Every column has at least `length` rows.
 */
export interface BatchColumns {
  /** Device indexes (Engine.deviceIndex); an index no device has is `denied/unknownDevice`. */
  readonly device: Uint32Array;
  /** Credential numbers (non-negative safe integers, as in requests: up to 2^53 - 1). */
  readonly card: Float64Array;
  /** Facility codes; -1 for none (a request's null). Float64 because a credential's facility code may exceed 2^31. */
  readonly facility: Float64Array;
  /** Instants, epoch ms. */
  readonly atMs: Float64Array;
  /** Optional: each scan's channel, 0 `wiegand`, 1 `unencryptedOsdp`, 2 `encryptedOsdp`; absent: all `wiegand`. */
  readonly input?: Uint8Array;
  /**
   * Optional, for card numbers past 2^53−1 (CN5): where `wideCard[i]` is a string, it is row i's
   * credential number as a request writes it (a decimal string, any value up to 2^512−1; one that is
   * not is `denied/badRequest`) and `card[i]` is not read; null or undefined: `card[i]` is.
   */
  readonly wideCard?: readonly (string | null | undefined)[];
  /** Rows to decide; default `device.length`. */
  readonly length?: number;
}

/** Where decideBatch writes row i's decision, in the rows' order. Each column has at least as many rows as the batch. */
export interface BatchOut {
  /** Outcome code: index into OUTCOME_CODES (0 allowed, 1 denied, 2 unknown). */
  readonly outcome: Uint8Array;
  /** Reason code: index into REASONS (Engine.reasonCodes). */
  readonly reason: Uint8Array;
  /** The deciding rule (a decision's `activeRuleId`) as a rule index for Engine.ruleId, -1 for none. */
  readonly rule: Int32Array;
}

/** Batches at least this long, and with at least one row per device on average, are decided grouped by device. */
const GROUP_MIN_ROWS = 256;
/** Rows whose memory is fetched ahead together (prefetchRows) before they are decided one by one. */
const WINDOW = 16;

// Scratch of the grouping (a counting sort by device), reused across batches: no user code runs
// while a batch is decided (its columns are checked to be typed arrays), so one set is enough.
let ORDER = new Uint32Array(0);
let STARTS = new Uint32Array(0);
/** Where prefetchRows puts what it read, so that no load is dropped as dead code. */
const TOUCHED = new Float64Array(1);

function column<T>(value: unknown, type: abstract new (...args: never[]) => T, name: string, rows: number): T {
  if (!(value instanceof (type as unknown as typeof Uint8Array)) || !ArrayBuffer.isView(value))
    throw new TypeError(`decideBatch: ${name} must be a ${type.name}`);
  if (value.length < rows)
    throw new RangeError(`decideBatch: ${name} has ${value.length} rows, fewer than the batch's ${rows}`);
  return value as T;
}

/**
 * Decides a batch of card scans (BatchColumns) into `out` (BatchOut): for each row, the outcome,
 * reason and deciding rule decide gives for the row's request. Rows are decided grouped by device
 * (consecutive reads of one device's rule runs stay in cache), a window at a time whose card slots
 * and holder records are read first, in tight loops whose cache misses overlap; outputs are in row
 * order. Allocates nothing per row.
 * @throws TypeError / RangeError when a column is not the typed array it must be or is too short.
 */
export function decideBatch(sys: CompiledSystem, columns: BatchColumns, out: BatchOut): void {
  const rows = columns.length ?? (columns.device === undefined ? 0 : columns.device.length);
  if (!Number.isSafeInteger(rows) || rows < 0)
    throw new RangeError("decideBatch: length must be a non-negative integer");
  const device = column(columns.device, Uint32Array, "device", rows);
  const card = column(columns.card, Float64Array, "card", rows);
  const facility = column(columns.facility, Float64Array, "facility", rows);
  const atMs = column(columns.atMs, Float64Array, "atMs", rows);
  const input = columns.input === undefined ? null : column(columns.input, Uint8Array, "input", rows);
  const wide = columns.wideCard === undefined ? null : wideColumn(columns.wideCard, rows);
  const outcome = column(out.outcome, Uint8Array, "outcome", rows);
  const reason = column(out.reason, Uint8Array, "reason", rows);
  const rule = column(out.rule, Int32Array, "rule", rows);
  // The checked columns, read once (one object per batch, none per row).
  const target: BatchOut = { outcome, reason, rule };
  const devices = sys.devices_;
  const count = devices.length;
  if (ORDER.length < rows) ORDER = new Uint32Array(Math.max(rows, ORDER.length * 2));
  const order = ORDER;
  if (rows < GROUP_MIN_ROWS || rows < count) {
    for (let i = 0; i < rows; i++) order[i] = i;
  } else {
    // Counting sort of the row numbers by device (indexes no device has share the last bucket).
    if (STARTS.length < count + 2) STARTS = new Uint32Array(count + 2);
    const starts = STARTS;
    starts.fill(0, 0, count + 2);
    for (let i = 0; i < rows; i++) {
      const k = device[i]!;
      starts[(k < count ? k : count) + 1]!++;
    }
    for (let k = 1; k <= count + 1; k++) starts[k] = starts[k]! + starts[k - 1]!;
    for (let i = 0; i < rows; i++) {
      const k = device[i]!;
      order[starts[k < count ? k : count]!++] = i;
    }
  }
  for (let from = 0; from < rows; from += WINDOW) {
    const to = from + WINDOW < rows ? from + WINDOW : rows;
    prefetchRows(sys, card, order, from, to);
    for (let j = from; j < to; j++) {
      const i = order[j]!;
      const text = wide === null ? undefined : wide[i];
      if (typeof text !== "string") {
        const cn = card[i]!;
        batchRow(sys, devices, device, cn, Number.isSafeInteger(cn) && cn >= 0, facility, atMs, input, target, i);
      } else {
        // CN5: a row numbered by its string, parked in WIDE_ARG as a reader handle parks it.
        const ok = isCardNumber(text);
        batchRow(sys, devices, device, ok ? wideOrNumber(text) : -1, ok, facility, atMs, input, target, i);
      }
    }
  }
}

function wideColumn(value: unknown, rows: number): readonly (string | null | undefined)[] {
  if (!Array.isArray(value)) throw new TypeError("decideBatch: wideCard must be an array");
  if (value.length < rows)
    throw new RangeError(`decideBatch: wideCard has ${value.length} rows, fewer than the batch's ${rows}`);
  return value as readonly (string | null | undefined)[];
}

/**
 * Reads, for rows `order[from … to - 1]`, the first card-table slot of each card number, then each
 * holder's record: two short loops of independent loads, so the CPU has a
 * window's cache misses in flight at once instead of one at a time inside decideCore.
 */
function prefetchRows(sys: CompiledSystem, card: Float64Array, order: Uint32Array, from: number, to: number): void {
  const table = sys.cardTable_;
  const mask = sys.cardMask_;
  let acc = 0;
  for (let j = from; j < to; j++) {
    const cn = card[order[j]!]!;
    if (cn >= 0 && cn <= Number.MAX_SAFE_INTEGER) acc += table[(cardHash(cn) & mask) * CARD_STRIDE]!;
  }
  const hd = sys.holderData_;
  for (let j = from; j < to; j++) {
    const cn = card[order[j]!]!;
    if (!(cn >= 0 && cn <= Number.MAX_SAFE_INTEGER)) continue;
    const c = findCard(sys, cn);
    if (c >= 0) acc += hd[(table[c + 2]! | 0) * HOLDER_STRIDE + H_GROUP_FROM]!;
  }
  TOUCHED[0] = acc;
}

/**
 * Row i of a batch: checked as checkRequest checks its request, then decided by decideCore. `cn` is
 * the row's card number (WIDE: WIDE_ARG's string), `cnOk` whether it was a valid one.
 */
function batchRow(
  sys: CompiledSystem,
  devices: readonly CompiledDevice[],
  device: Uint32Array,
  cn: number,
  cnOk: boolean,
  facility: Float64Array,
  atMs: Float64Array,
  input: Uint8Array | null,
  out: BatchOut,
  i: number,
): void {
  const fc = facility[i]!;
  const at = atMs[i]!;
  // The instant reaches decideCore through NUMBERS (a double argument would be boxed).
  const channel = input === null ? 0 : input[i]!;
  let code: number;
  if (
    !cnOk ||
    !(fc === -1 || (Number.isSafeInteger(fc) && fc >= 0)) ||
    !(Number.isSafeInteger(at) && at >= MIN_INSTANT && at < MAX_INSTANT) ||
    channel > 2
  )
    code = exitEmpty(null, sys, C_BAD_REQUEST);
  else {
    const k = device[i]!;
    if (k < devices.length) {
      NUMBERS[ARG_AT] = at;
      code = decideCore(
        null,
        sys,
        devices[k]!,
        1 << channel,
        KIND_NUMBER,
        NO_BITS,
        0,
        cn,
        fc,
        0,
        null,
        null,
        ONLINE,
        undefined,
      );
    } else code = exitEmpty(null, sys, C_UNKNOWN_DEVICE);
  }
  out.outcome[i] = OUTCOME_OF_REASON[code]!;
  out.reason[i] = code;
  out.rule[i] = LAST_RULE[0]!;
}
