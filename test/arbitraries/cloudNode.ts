// Cloud nodes: offline policy, kill timer, time zone (or none, falling back to the system's), card
// formats and e-cards. E-cards are picks resolved against the holders' card numbers when the snapshot
// is built, so they often overlap a holder's card.
import fc from "fast-check";
import { type CardFormatInput, nodeCardFormatsArb } from "./cardFormat.js";
import { type Zone, zoneArb } from "./zone.js";

/** An e-card: the number of some holder's card (resolved later), or any number. */
export type EcardPick = { readonly holderCard: number } | { readonly number: number };

export interface CloudNodeSpec {
  readonly timezone: Zone | null | undefined;
  readonly offlinePolicy: 0 | 1 | 2 | undefined;
  readonly killTimer: number | undefined;
  readonly cardFormat: CardFormatInput[] | null | undefined;
  readonly ecards: EcardPick[] | null | undefined;
  /** The node's one connection: its type, and for an ethernet controller which optional fields it states. */
  readonly connectionType: "lockhub" | "ethernet" | "usb" | "wirelessCoordinator" | "wirelessGateway";
  readonly connectionOptions: number;
}

export const DEFAULT_KILL_TIMER = 259_200;

const ecardPickArb: fc.Arbitrary<EcardPick> = fc.oneof(
  { weight: 3, arbitrary: fc.nat().map((holderCard) => ({ holderCard })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 65_535 }))
      .map((number) => ({ number })),
  },
);

export const cloudNodeSpecArb: fc.Arbitrary<CloudNodeSpec> = fc.record({
  timezone: fc.oneof({ weight: 3, arbitrary: zoneArb }, { weight: 1, arbitrary: fc.constantFrom(null, undefined) }),
  offlinePolicy: fc.constantFrom<0 | 1 | 2 | undefined>(0, 1, 1, 2, 2, undefined),
  killTimer: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(300, 900, 3600, 86_400, DEFAULT_KILL_TIMER),
    fc.integer({ min: 300, max: 400_000 }),
  ),
  cardFormat: nodeCardFormatsArb,
  ecards: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
    { weight: 3, arbitrary: fc.array(ecardPickArb, { maxLength: 3 }) },
  ),
  connectionType: fc.constantFrom(
    "lockhub",
    "lockhub",
    "ethernet",
    "ethernet",
    "usb",
    "wirelessCoordinator",
    "wirelessGateway",
  ),
  connectionOptions: fc.nat({ max: 15 }),
});
