// Access requests for a built snapshot (SPEC §2), biased toward what the snapshot holds: its device
// ids, its holders' card numbers, PINs and credential ids, its e-cards; raw Wiegand frames encoding a
// real card (sometimes with a flipped bit or a wrong length); node online, offline within or beyond
// the kill timer, offline without a clock. A small share are unknown devices or malformed requests.
import fc from "fast-check";
import { CUSTOM_FORMATS, FACILITY_CODES, layoutOfInput } from "./cardFormat.js";
import { type Input, INPUTS } from "./device.js";
import { PIN_POOL, cardNumberArb } from "./holder.js";
import { type AtFormat, type AtSpec, atFormatArb, atSpecArb, formatAt, resolveAt } from "./instant.js";
import type { CredentialMeta, DeviceMeta, HolderMeta, RuleMeta, SnapshotMeta } from "./snapshot.js";
import { encodeLayout, flipBit } from "./wiegand.js";

/** `wrongFixed`: one marker bit of the layout inverted, parity computed over it (a frame only the marker check refuses). */
export type WiegandMutation = "none" | "flip" | "longer" | "shorter" | "wrongFixed";

export type CredentialRequestSpec =
  | { readonly kind: "none" }
  | {
      readonly kind: "wiegandCard";
      readonly cardPick: number;
      readonly formatPick: number;
      readonly facilityCode: "own" | number;
      readonly hugeNumber: boolean;
      readonly mutation: WiegandMutation;
      readonly mutationPick: number;
      readonly fill: 0 | 1;
    }
  | { readonly kind: "wiegandRandom"; readonly bits: string }
  | {
      readonly kind: "number";
      readonly source: "card" | "ecard" | "digital" | "random";
      readonly pick: number;
      readonly random: number | string;
      readonly facilityCode: "omit" | "null" | "own" | number;
    }
  | {
      readonly kind: "mobile";
      /** `match`: a kind the credential has (else touch). */
      readonly mobile: "match" | "touch" | "token";
      readonly source: "digital" | "card" | "unknown";
      readonly pick: number;
    };

export type PinSpec =
  | { readonly kind: "none" }
  | { readonly kind: "own" }
  | { readonly kind: "duress" }
  | { readonly kind: "otherHolder"; readonly pick: number }
  | { readonly kind: "random"; readonly pin: string };

export type NodeStateSpec =
  | { readonly kind: "absent" }
  | { readonly kind: "online" }
  | {
      readonly kind: "offlineKnown";
      readonly relation: "below" | "equal" | "above";
      readonly amount: number;
      readonly explicit: boolean;
    }
  | { readonly kind: "offlineUnknown"; readonly seconds: number | undefined };

export interface RequestSpec {
  readonly unknownDevice: boolean;
  /**
   * Aim at a (holder, device, rule) triple where one of the holder's rules reaches the device: the
   * credential and PIN are then the holder's and window instants use that rule.
   */
  readonly targeted: boolean;
  readonly targetPick: number;
  readonly devicePick: number;
  /** Whose PIN (or whose card) when the credential does not name a holder. */
  readonly holderPick: number;
  readonly credential: CredentialRequestSpec;
  readonly pin: PinSpec;
  /** `fit`: one of the device's input types (or absent when it takes wiegand); else any. */
  readonly input: { readonly fit: boolean; readonly pick: number; readonly any: Input | undefined };
  readonly node: NodeStateSpec;
  readonly at: AtSpec;
  readonly atFormat: AtFormat;
  /** Write absent optional fields as explicit nulls and add an unknown key. */
  readonly explicitNulls: boolean;
  /** Index into MALFORMATIONS, or null for a well-formed request. */
  readonly malformed: number | null;
}

const bitsArb = (min: number, max: number) =>
  fc.array(fc.constantFrom("0", "1"), { minLength: min, maxLength: max }).map((a) => a.join(""));

const credentialRequestArb: fc.Arbitrary<CredentialRequestSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "none" as const }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("wiegandCard" as const),
      cardPick: fc.nat(),
      formatPick: fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat() }),
      facilityCode: fc.oneof(
        { weight: 7, arbitrary: fc.constant("own" as const) },
        { weight: 1, arbitrary: fc.constantFrom(...FACILITY_CODES, 3) },
      ),
      hugeNumber: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      mutation: fc.oneof(
        { weight: 12, arbitrary: fc.constant<WiegandMutation>("none") },
        { weight: 1, arbitrary: fc.constant<WiegandMutation>("flip") },
        { weight: 1, arbitrary: fc.constantFrom<WiegandMutation>("longer", "shorter") },
        { weight: 1, arbitrary: fc.constant<WiegandMutation>("wrongFixed") },
      ),
      mutationPick: fc.nat(),
      fill: fc.constantFrom<0 | 1>(0, 1),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("wiegandRandom" as const),
      bits: fc.oneof(bitsArb(9, 12), bitsArb(26, 26), bitsArb(32, 34), bitsArb(60, 64), bitsArb(9, 80)),
    }),
  },
  {
    weight: 7,
    arbitrary: fc.record({
      kind: fc.constant("number" as const),
      source: fc.oneof(
        { weight: 12, arbitrary: fc.constant("card" as const) },
        { weight: 2, arbitrary: fc.constant("ecard" as const) },
        { weight: 1, arbitrary: fc.constant("digital" as const) },
        { weight: 1, arbitrary: fc.constant("random" as const) },
      ),
      pick: fc.nat(),
      random: cardNumberArb,
      facilityCode: fc.oneof(
        { weight: 1, arbitrary: fc.constantFrom("omit" as const, "null" as const) },
        { weight: 5, arbitrary: fc.constant("own" as const) },
        { weight: 1, arbitrary: fc.constantFrom(...FACILITY_CODES, 3, 70_000) },
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("mobile" as const),
      mobile: fc.oneof(
        { weight: 4, arbitrary: fc.constant("match" as const) },
        { weight: 1, arbitrary: fc.constantFrom("touch" as const, "token" as const) },
      ),
      source: fc.oneof(
        { weight: 5, arbitrary: fc.constant("digital" as const) },
        { weight: 1, arbitrary: fc.constantFrom("card" as const, "unknown" as const) },
      ),
      pick: fc.nat(),
    }),
  },
);

const pinSpecArb: fc.Arbitrary<PinSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: "none" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "own" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "duress" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("otherHolder" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("random" as const),
      pin: fc.oneof(
        fc.constantFrom(...PIN_POOL, "9999", "0"),
        fc.array(fc.constantFrom(..."0123456789"), { minLength: 1, maxLength: 8 }).map((a) => a.join("")),
      ),
    }),
  },
);

const nodeStateArb: fc.Arbitrary<NodeStateSpec> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ kind: "absent" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "online" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("offlineKnown" as const),
      relation: fc.constantFrom("below" as const, "below" as const, "equal" as const, "above" as const),
      amount: fc.oneof(fc.constantFrom(0, 1), fc.nat(1_000_000)),
      explicit: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("offlineUnknown" as const),
      seconds: fc.option(fc.nat(1_000_000), { nil: undefined }),
    }),
  },
);

export const requestSpecArb: fc.Arbitrary<RequestSpec> = fc.record({
  unknownDevice: fc.oneof({ weight: 40, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  targeted: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  targetPick: fc.nat(),
  devicePick: fc.nat(),
  holderPick: fc.nat(),
  credential: credentialRequestArb,
  pin: pinSpecArb,
  input: fc.record({
    fit: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    pick: fc.nat(),
    any: fc.constantFrom(undefined, ...INPUTS),
  }),
  node: nodeStateArb,
  at: atSpecArb,
  atFormat: atFormatArb,
  explicitNulls: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  malformed: fc.oneof({ weight: 40, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
});

type Json = Record<string, unknown>;

/** Ways to break a well-formed request (SPEC §2, semantics R1–R6): each must give `badRequest`. */
export const MALFORMATIONS: readonly ((r: Json) => unknown)[] = [
  ({ deviceId: _, ...rest }) => rest,
  (r) => ({ ...r, deviceId: "" }),
  (r) => ({ ...r, deviceId: 42 }),
  (r) => ({ ...r, at: "2026-03-08T02:30:00" }),
  (r) => ({ ...r, at: 1.5 }),
  (r) => ({ ...r, at: -1 }),
  (r) => ({ ...r, at: 4_102_444_800_000 }),
  (r) => ({ ...r, at: "2026-02-30T10:00:00Z" }),
  ({ at: _, ...rest }) => rest,
  (r) => ({ ...r, credential: { wiegand: "0101", credentialNumber: 5 } }),
  (r) => ({ ...r, credential: { wiegand: "01010101" } }),
  (r) => ({ ...r, credential: { wiegand: `${"0".repeat(25)}2` } }),
  (r) => ({ ...r, credential: { credentialNumber: -1 } }),
  (r) => ({ ...r, credential: { credentialNumber: 2 ** 53 } }),
  (r) => ({ ...r, credential: { credentialNumber: 12, facilityCode: "17" } }),
  (r) => ({ ...r, credential: { mobile: "nfc", credentialId: "x" } }),
  (r) => ({ ...r, credential: { mobile: "touch", credentialId: "" } }),
  (r) => ({ ...r, credential: {} }),
  (r) => ({ ...r, credential: "card" }),
  (r) => ({ ...r, pin: "12a4" }),
  (r) => ({ ...r, pin: "" }),
  (r) => ({ ...r, pin: 1234 }),
  ({ credential: _c, pin: _p, ...rest }) => rest,
  (r) => ({ ...r, input: "bluetooth" }),
  (r) => ({ ...r, node: { online: false } }),
  (r) => ({ ...r, node: { online: "no" } }),
  (r) => ({ ...r, node: { online: false, offlineSeconds: -5 } }),
  (r) => ({ ...r, node: { online: false, offlineSeconds: 10, timeKnown: "yes" } }),
  (r) => ({ ...r, node: { online: false, offlineSeconds: 1.5 } }),
  () => null,
  () => "request",
  () => [],
  () => 7,
];

function pick<T>(list: readonly T[], i: number): T | undefined {
  return list.length === 0 ? undefined : list[i % list.length];
}

/**
 * Builds the Wiegand frame of a real card in one of the node's formats: one of `cards` whose number
 * and facility code fit the layout's fields when there is one.
 */
function wiegandFor(
  spec: Extract<CredentialRequestSpec, { kind: "wiegandCard" }>,
  cards: readonly CredentialMeta[],
  device: DeviceMeta | null,
  meta: SnapshotMeta,
): { bits: string; card: CredentialMeta | undefined } {
  const formats = (device?.node ?? meta.nodes[0]!).formats;
  // Mostly the node's own first format; sometimes any format the generator knows (a foreign frame).
  const all = [...formats, ...CUSTOM_FORMATS];
  const format = spec.formatPick < formats.length ? formats[spec.formatPick]! : all[spec.formatPick % all.length]!;
  const length = format.min_input_bits + (spec.mutationPick % (format.max_input_bits - format.min_input_bits + 1));
  const layout = layoutOfInput(format, length);
  const fits = (c: CredentialMeta) =>
    c.number !== null &&
    BigInt(c.number) < 2n ** BigInt(layout.cardNumber.length) &&
    (layout.facilityCode === null || (c.facilityCode !== null && c.facilityCode < 2 ** layout.facilityCode.length));
  // A frame without a facility-code field (H10302, a raw format) under ENFORCED matches only cards
  // without a code (semantics S17): when the spec asks for the card's own code, aim at those.
  const codeless =
    layout.facilityCode === null &&
    (("facility_code" in format ? format.facility_code : undefined) ?? "ENFORCED") === "ENFORCED" &&
    spec.facilityCode === "own";
  const aimed = (c: CredentialMeta) => fits(c) && (!codeless || c.facilityCode === null);
  // The aimed-at holder's fitting cards, else anyone's fitting cards, else any card.
  const candidates =
    [cards.filter(aimed), meta.cards.filter(aimed), cards.filter(fits), meta.cards.filter(fits)].find(
      (l) => l.length > 0,
    ) ?? cards;
  const card = pick(candidates, spec.cardPick);
  const fc = spec.facilityCode === "own" ? (card?.facilityCode ?? 0) : spec.facilityCode;
  // A number beyond 2^53−1 only fits a wide card-number field (W60).
  const cn =
    spec.hugeNumber && layout.cardNumber.length > 53
      ? 2n ** 53n + BigInt(spec.mutationPick % 5)
      : BigInt(card?.number ?? spec.mutationPick % 65_536);
  let bits = encodeLayout(layout, length, fc, cn, spec.fill, spec.mutation === "wrongFixed" ? spec.mutationPick : -1);
  switch (spec.mutation) {
    case "flip":
      bits = flipBit(bits, spec.mutationPick);
      break;
    case "longer":
      bits = `${bits}${spec.fill}`;
      break;
    case "shorter":
      bits = bits.length > 9 ? bits.slice(0, -1) : bits;
      break;
    case "none":
    case "wrongFixed":
      break;
  }
  return { bits, card };
}

/** (holder, device, rule) triples where a rule of one of the holder's groups reaches the device. */
function targets(meta: SnapshotMeta): { holder: HolderMeta; device: DeviceMeta; rule: RuleMeta }[] {
  const out: { holder: HolderMeta; device: DeviceMeta; rule: RuleMeta }[] = [];
  for (const rule of meta.rules)
    for (const holder of meta.holders)
      if (holder.groups.includes(rule.groupId))
        for (const id of rule.deviceIds) out.push({ holder, device: meta.devices.find((d) => d.id === id)!, rule });
  return out;
}

/** Resolves a request spec against a built snapshot into request JSON (possibly malformed). */
export function buildRequest(meta: SnapshotMeta, spec: RequestSpec): unknown {
  let aims = spec.targeted ? targets(meta) : [];
  // Without a clock, offline policy 1 only admits 24x7 rules: aim at those half of the time.
  if (spec.node.kind === "offlineUnknown" && spec.targetPick % 2 === 0) {
    const always = aims.filter(
      ({ rule }) =>
        rule.recurring.length === 7 &&
        (rule.startTime === rule.stopTime || (rule.startTime === "00:00:00" && rule.stopTime === "24:00:00")),
    );
    if (always.length > 0) aims = always;
  }
  const target = pick(aims, spec.targetPick >> 1);
  const device = spec.unknownDevice ? null : (target?.device ?? pick(meta.devices, spec.devicePick)!);
  let holder: HolderMeta | undefined = target?.holder ?? pick(meta.holders, spec.holderPick);
  const req: Json = { deviceId: device?.id ?? "no-such-device" };
  const ms = resolveAt(spec.at, meta, device, target?.rule ?? null);
  req.at = formatAt(ms, spec.atFormat, device?.node.zone ?? "UTC");

  // A targeted request presents the target holder's credential when it has one of the kind.
  const own = (list: readonly CredentialMeta[]) => {
    const mine = target === undefined ? [] : list.filter((c) => c.holderId === target.holder.id);
    return mine.length > 0 ? mine : list;
  };
  const c = spec.credential;
  const holderOf = (cred: CredentialMeta | undefined) =>
    cred === undefined ? holder : meta.holders.find((h) => h.id === cred.holderId);
  switch (c.kind) {
    case "none":
      if (spec.explicitNulls) req.credential = null;
      break;
    case "wiegandCard": {
      const { bits, card } = wiegandFor(c, own(meta.cards), device, meta);
      holder = holderOf(card);
      req.credential = { wiegand: bits };
      break;
    }
    case "wiegandRandom":
      req.credential = { wiegand: c.bits };
      break;
    case "number": {
      let number: number | string = c.random;
      let cred: CredentialMeta | undefined;
      if (c.source === "card") cred = pick(own(meta.cards), c.pick);
      if (c.source === "digital")
        cred = pick(
          meta.digital.filter((d) => d.number !== null),
          c.pick,
        );
      if (cred !== undefined) {
        number = cred.number!;
        holder = holderOf(cred);
      }
      if (c.source === "ecard") number = pick((device?.node ?? meta.nodes[0]!).ecards, c.pick) ?? number;
      const out: Json = { credentialNumber: number };
      if (c.facilityCode === "null") out.facilityCode = null;
      else if (c.facilityCode === "own") out.facilityCode = cred?.facilityCode ?? null;
      else if (c.facilityCode !== "omit") out.facilityCode = c.facilityCode;
      req.credential = out;
      break;
    }
    case "mobile": {
      const list = c.source === "digital" ? own(meta.digital) : c.source === "card" ? meta.cards : [];
      const cred = pick(list, c.pick);
      if (cred !== undefined) holder = holderOf(cred);
      const mobile = c.mobile !== "match" ? c.mobile : cred?.types.includes("touch") === false ? "token" : "touch";
      req.credential = { mobile, credentialId: cred?.id ?? "no-such-credential" };
      break;
    }
  }

  // Neither credential nor PIN is malformed (R4); MALFORMATIONS covers that, so here a PIN is typed.
  const p: PinSpec = c.kind === "none" && spec.pin.kind === "none" ? { kind: "own" } : spec.pin;
  let pin: string | null = null;
  if (p.kind === "own")
    pin =
      holder?.pin ??
      holder?.duressPin ??
      (c.kind === "none"
        ? pick(
            meta.holders.filter((h) => h.pin !== null),
            spec.holderPick,
          )?.pin
        : null) ??
      "5555";
  if (p.kind === "duress") pin = holder?.duressPin ?? holder?.pin ?? "5555";
  if (p.kind === "otherHolder")
    pin =
      pick(
        meta.holders.filter((h) => h.pin !== null),
        p.pick,
      )?.pin ?? "0000";
  if (p.kind === "random") pin = p.pin;
  if (pin !== null) req.pin = pin;
  else if (spec.explicitNulls) req.pin = null;

  if (spec.input.fit && device !== null) {
    const options: (string | undefined)[] = device.inputTypes.includes("wiegand")
      ? [undefined, ...device.inputTypes]
      : [...device.inputTypes];
    const input = options[spec.input.pick % options.length];
    if (input !== undefined) req.input = input;
  } else if (spec.input.any !== undefined) req.input = spec.input.any;

  const n = spec.node;
  const killTimer = (device?.node ?? meta.nodes[0]!).killTimer;
  switch (n.kind) {
    case "absent":
      if (spec.explicitNulls) req.node = null;
      break;
    case "online":
      req.node = { online: true };
      break;
    case "offlineKnown": {
      const seconds =
        n.relation === "equal"
          ? killTimer
          : n.relation === "below"
            ? Math.max(0, killTimer - 1 - (n.amount % killTimer))
            : killTimer + 1 + n.amount;
      req.node = n.explicit
        ? { online: false, offlineSeconds: seconds, timeKnown: true }
        : { online: false, offlineSeconds: seconds };
      break;
    }
    case "offlineUnknown":
      req.node =
        n.seconds === undefined
          ? { online: false, timeKnown: false }
          : { online: false, timeKnown: false, offlineSeconds: n.seconds };
      break;
  }
  if (spec.explicitNulls) req.note = "unknown keys are ignored";

  return spec.malformed === null ? req : MALFORMATIONS[spec.malformed % MALFORMATIONS.length]!(req);
}

/** Requests for a given built snapshot. */
export function requestArb(meta: SnapshotMeta): fc.Arbitrary<unknown> {
  return requestSpecArb.map((spec) => buildRequest(meta, spec));
}
