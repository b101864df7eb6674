// Devices: door devices (readers, I/O devices) with input types, secured reads, BLE support and an
// authentication policy, and sometimes an elevator bank (one or two elevator readers, one or two
// floor relays and the floor groups joining them). Node and reader choices are picks, resolved when
// the snapshot is built.
import fc from "fast-check";

export const POLICIES = ["cardOnly", "pinOnly", "cardOrPin", "cardAndPin"] as const;
export type Policy = (typeof POLICIES)[number];
export const INPUTS = ["wiegand", "unencryptedOsdp", "encryptedOsdp"] as const;
export type Input = (typeof INPUTS)[number];

/** `undefined` leaves the key out (seed default), `null` is explicit "no policy". */
export const policyArb: fc.Arbitrary<Policy | null | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(undefined, null) },
  { weight: 4, arbitrary: fc.constantFrom(...POLICIES) },
);

/** Reader options shared by door and elevator readers. */
export interface ReaderOptions {
  readonly inputTypes: Input[] | undefined;
  readonly securedReadsOnly: boolean | undefined;
  readonly supportBleCredentials: boolean | undefined;
  readonly authenticationPolicy: Policy | null | undefined;
}

const readerOptionsArb: fc.Arbitrary<ReaderOptions> = fc.record({
  inputTypes: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.shuffledSubarray([...INPUTS], { minLength: 1 }) },
  ),
  securedReadsOnly: fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(undefined, false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  supportBleCredentials: fc.constantFrom(undefined, false, true, true),
  authenticationPolicy: policyArb,
});

export type DoorType = "primaryReader" | "additionalReader" | "ioDevice" | "premiumIoDevice";

export interface DoorSpec extends ReaderOptions {
  readonly type: DoorType;
  readonly nodePick: number;
  /** additionalReader: which earlier primary reader it belongs to. */
  readonly primaryPick: number;
  readonly connectionAsObject: boolean;
}

export const doorSpecArb: fc.Arbitrary<DoorSpec> = fc
  .record({
    type: fc.oneof(
      { weight: 5, arbitrary: fc.constant<DoorType>("primaryReader") },
      { weight: 2, arbitrary: fc.constant<DoorType>("additionalReader") },
      { weight: 1, arbitrary: fc.constantFrom<DoorType>("ioDevice", "premiumIoDevice") },
    ),
    nodePick: fc.nat(),
    primaryPick: fc.nat(),
    connectionAsObject: fc.boolean(),
    options: readerOptionsArb,
  })
  .map(({ options, ...rest }) => ({ ...rest, ...options }));

export interface FloorGroupSpec {
  /** Which reader of the bank (mod the reader count). */
  readonly readerPick: number;
  /** Bit i set = floor relay i (never empty: bit 0 is forced when no bit hits). */
  readonly relayMask: number;
  readonly refsAsObjects: boolean;
}

export interface ElevatorBankSpec {
  readonly nodePick: number;
  readonly readers: ReaderOptions[];
  readonly relayCount: number;
  readonly floorGroups: FloorGroupSpec[];
  /**
   * 0, or 32–34: that many extra floor groups at the first reader, past the 31 a bitmask of floor
   * groups per reader can hold (the engine has a separate path for such readers).
   */
  readonly extraFloorGroups: number;
}

export const elevatorBankSpecArb: fc.Arbitrary<ElevatorBankSpec> = fc.record({
  nodePick: fc.nat(),
  readers: fc.array(readerOptionsArb, { minLength: 1, maxLength: 2 }),
  relayCount: fc.integer({ min: 1, max: 3 }),
  floorGroups: fc.array(
    fc.record({ readerPick: fc.nat(), relayMask: fc.integer({ min: 1, max: 7 }), refsAsObjects: fc.boolean() }),
    { minLength: 1, maxLength: 3 },
  ),
  extraFloorGroups: fc.oneof(
    { weight: 10, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 32, max: 34 }) },
  ),
});
