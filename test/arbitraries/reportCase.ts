// Snapshots and report bodies for the report property (issue 17): holders whose names, emails,
// partitions, groups and credentials come from small pools, so that filters both hit and miss and
// names tie (the order's later keys matter); bodies with random filters of every type.
import fc from "fast-check";
import type { SystemSnapshotInput } from "../../src/model/index.js";

export const NAME_POOL = [
  "Ann",
  "ann",
  "ANN",
  "Bob",
  "Zoë",
  "de Vries",
  "<script>",
  '=HYPERLINK("x")',
  "Ångström",
  "O'Neil",
  "Bo",
] as const;
export const EMAIL_POOL = [null, "ann@example.com", "BOB@EXAMPLE.COM", "x@y", ""] as const;
export const CARD_POOL = [1, 2, 10000, 10050, 10100] as const;
export const PARTITIONS = ["p-a", "p-b", "p-c"] as const;
export const GROUPS = ["g-day", "g-night", "g-staff", "g-vip"] as const;

interface HolderSpec {
  first: number;
  last: number;
  email: number;
  enabled: boolean;
  partition: number; // PARTITIONS index, or 3: none
  groupMask: number;
  cards: number[];
  digital: { type: "touch" | "token" | "both"; accepted: boolean }[];
  extras: number; // bit 0: pin, bit 1: duress PIN, bit 2: activeDate, bit 3: expireDate, bit 4: a custom field
}

const holderSpecArb: fc.Arbitrary<HolderSpec> = fc.record({
  first: fc.nat({ max: NAME_POOL.length - 1 }),
  last: fc.nat({ max: NAME_POOL.length - 1 }),
  email: fc.nat({ max: EMAIL_POOL.length - 1 }),
  enabled: fc.boolean(),
  partition: fc.nat({ max: 3 }),
  groupMask: fc.nat({ max: 15 }),
  cards: fc.uniqueArray(fc.nat({ max: CARD_POOL.length - 1 }), { maxLength: 2 }),
  digital: fc.array(
    fc.record({ type: fc.constantFrom("touch" as const, "token" as const, "both" as const), accepted: fc.boolean() }),
    { maxLength: 2 },
  ),
  extras: fc.nat({ max: 31 }),
});

/** A snapshot of up to 12 holders (card numbers made unique system-wide by dropping repeats). */
export const reportSnapshotArb: fc.Arbitrary<SystemSnapshotInput> = fc
  .array(holderSpecArb, { maxLength: 12 })
  .map((specs) => {
    const usedCards = new Set<number>();
    let digitalNumber = 900_000;
    const holders = specs.map((s, i) => {
      const credentials: Record<string, unknown>[] = [];
      s.cards.forEach((c, k) => {
        const n = CARD_POOL[c]!;
        if (usedCards.has(n)) return;
        usedCards.add(n);
        credentials.push({ id: `c-${i}-${k}`, credentialNumber: n, types: ["card"] });
      });
      s.digital.forEach((d, k) => {
        const types = d.type === "both" ? ["touch", "token"] : [d.type];
        credentials.push({ id: `d-${i}-${k}`, credentialNumber: d.accepted ? digitalNumber++ : null, types });
      });
      return {
        // ids whose string order differs from their numeric order (h-10 < h-2)
        id: `h-${i}`,
        firstName: NAME_POOL[s.first]!,
        lastName: NAME_POOL[s.last]!,
        email: EMAIL_POOL[s.email],
        enabled: s.enabled,
        partition: s.partition === 3 ? null : PARTITIONS[s.partition]!,
        groups: GROUPS.filter((_, g) => (s.groupMask & (1 << g)) !== 0),
        credentials,
        ...((s.extras & 1) !== 0 ? { pin: "1234" } : {}),
        ...((s.extras & 2) !== 0 ? { duressPin: "9999" } : {}),
        ...((s.extras & 4) !== 0 ? { activeDate: "2026-03-29T02:30:00" } : {}),
        ...((s.extras & 8) !== 0 ? { expireDate: "2027-12-31T23:59:59" } : { expireDate: null }),
        ...((s.extras & 16) !== 0 && s.partition === 0 ? { customFields: { badge: `B-${i}` } } : {}),
      };
    });
    return {
      format: "rsop-system/1",
      systemId: "sys-report",
      partitions: PARTITIONS.map((id, k) => ({ id, name: `Partition ${id}`, ...(k === 0 ? { default: true } : {}) })),
      groups: GROUPS.map((id, k) => ({ id, name: `Group ${id}`, partition: PARTITIONS[k % 3]! })),
      customFields: [{ id: "badge", type: "string", partition: "p-a" }],
      holders,
    } as SystemSnapshotInput;
  });

const textFilterArb = fc.record(
  {
    type: fc.constantFrom("firstName", "lastName", "email"),
    operator: fc.constantFrom("equals", "does not equal", "contains", "does not contain"),
    operand: fc.oneof(fc.constantFrom(...NAME_POOL, "ann", "AN", "", "example", "B"), fc.string({ maxLength: 2 })),
    caseSensitive: fc.boolean(),
  },
  { requiredKeys: ["type", "operator", "operand"] },
);
const idsArb = (pool: readonly string[]) => fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 });
const setFilterArb = (type: "groups" | "partition", pool: readonly string[]) =>
  fc.oneof(
    fc.record({ type: fc.constant(type), memberOf: idsArb(pool) }),
    fc.record({ type: fc.constant(type), notMemberOf: idsArb(pool) }),
    fc.record({ type: fc.constant(type), memberOf: idsArb(pool), notMemberOf: idsArb(pool) }),
  );
const cardArb = fc.record({
  operator: fc.constantFrom("equals", "does not equal"),
  operand: fc.constantFrom(...CARD_POOL, 3),
});
const mobileArb = fc.record({
  type: fc.constantFrom("touch", "token"),
  status: fc.constantFrom("accepted", "pending"),
});
const credentialFilterArb = fc.oneof(
  fc.record({ type: fc.constant("credentials"), cardNumber: cardArb }),
  fc.record({ type: fc.constant("credentials"), mobile: mobileArb }),
  fc.record({ type: fc.constant("credentials"), cardNumber: cardArb, mobile: mobileArb }),
);

/** A valid report filter of any type. */
export const reportFilterArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  textFilterArb,
  fc.record({ type: fc.constant("enabled"), value: fc.boolean() }),
  setFilterArb("groups", GROUPS),
  setFilterArb("partition", PARTITIONS),
  credentialFilterArb,
);

/** A valid 2.0 report body: some filters, maybe a partition, maybe an output selection. */
export const reportBodyArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    filters: fc.array(reportFilterArb, { maxLength: 3 }),
    partition: fc.constantFrom(...PARTITIONS),
    output: fc.shuffledSubarray(
      [
        "id",
        "firstName",
        "lastName",
        "email",
        "partition",
        "cards",
        "groups",
        "pin",
        "duressPin",
        "enabled",
        "activeDate",
        "expireDate",
        "bluetooth",
        "pendingBluetooth",
        "mobileApp",
        "pendingMobileApp",
        "customFields",
      ],
      { minLength: 1 },
    ),
  },
  { requiredKeys: [] },
);
