// The credentials segment: the open-addressing card table (cards by number, with tombstones), the
// mobile credentials by id, and PINs to their holder (or AMBIGUOUS). Holders add and take away their
// credentials through these functions (buildHolders.ts).
import type { Credential, Holder, SystemSnapshot } from "../model/index.js";
import {
  AMBIGUOUS,
  CARD_DELETED,
  CARD_EMPTY,
  CARD_STRIDE,
  CREDENTIAL_BIT,
  type CompiledSystem,
  cardHash,
  findCard,
} from "./compiledSystem.js";

/** The initial card table's capacity for a snapshot: a power of two at least twice its cards. */
export function cardCapacity(snapshot: SystemSnapshot): number {
  let cardCount = 0;
  for (const h of snapshot.holders)
    for (const c of h.credentials) if (c.types.includes("card") && typeof c.credentialNumber === "number") cardCount++;
  let capacity = 8;
  while (capacity < cardCount * 2) capacity *= 2;
  return capacity;
}

/** Rebuilds the card table with room to spare (every card again, deleted marks gone, cardIds_ compacted). */
function rebuildCardTable(sys: CompiledSystem, extra: number): void {
  const old = sys.cardTable_;
  const oldIds = sys.cardIds_;
  let capacity = 8;
  while (capacity < (sys.cardLive_ + extra) * 2) capacity *= 2;
  const table = new Float64Array(capacity * CARD_STRIDE).fill(CARD_EMPTY);
  const mask = capacity - 1;
  const ids: string[] = [];
  for (let base = 0; base < old.length; base += CARD_STRIDE) {
    const cn = old[base]!;
    if (cn < 0) continue;
    let s = cardHash(cn) & mask;
    while (table[s * CARD_STRIDE]! >= 0) s = (s + 1) & mask;
    const b = s * CARD_STRIDE;
    table[b] = cn;
    table[b + 1] = old[base + 1]!;
    table[b + 2] = old[base + 2]!;
    table[b + 3] = ids.length;
    const i = old[base + 3]!;
    ids.push(oldIds[i]!, oldIds[i + 1]!);
  }
  sys.cardTable_ = table;
  sys.cardMask_ = mask;
  sys.cardUsed_ = sys.cardLive_;
  sys.cardIds_ = ids;
}

function addPin(sys: CompiledSystem, pin: string, h: number): void {
  const owner = sys.pinOwner_.get(pin);
  if (owner === undefined) sys.pinOwner_.set(pin, h);
  else if (owner === AMBIGUOUS) sys.pinShared_.get(pin)!.add(h);
  else if (owner !== h) {
    sys.pinOwner_.set(pin, AMBIGUOUS);
    sys.pinShared_.set(pin, new Set([owner, h]));
  }
}

function removePin(sys: CompiledSystem, pin: string, h: number): void {
  const owner = sys.pinOwner_.get(pin);
  if (owner === h) sys.pinOwner_.delete(pin);
  else if (owner === AMBIGUOUS) {
    const shared = sys.pinShared_.get(pin)!;
    shared.delete(h);
    if (shared.size === 1) {
      sys.pinOwner_.set(pin, shared.values().next().value!);
      sys.pinShared_.delete(pin);
    }
  }
}

/** Adds cards (to the table) and mobile credentials of holder `i` (id `holderId`). */
export function addCredentials(
  sys: CompiledSystem,
  i: number,
  holderId: string,
  credentials: readonly Credential[],
): void {
  for (const c of credentials) {
    let types = 0;
    for (const t of c.types) types |= CREDENTIAL_BIT[t];
    if (types & CREDENTIAL_BIT.card) {
      // A card without a number yet (pending) cannot be read, so it is not in the table.
      if (c.credentialNumber === null) continue;
      if (typeof c.credentialNumber === "string") {
        // Past 2^53−1 (CN4): the wide map, keyed by the one spelling of the number.
        sys.wideCards_.set(c.credentialNumber, {
          fc_: c.facilityCode ?? -1,
          holder_: i,
          id_: c.id,
          holderId_: holderId,
        });
        continue;
      }
      if ((sys.cardUsed_ + 1) * 2 > sys.cardMask_ + 1) rebuildCardTable(sys, 1 + (sys.cardLive_ >> 1));
      const table = sys.cardTable_;
      const mask = sys.cardMask_;
      let s = cardHash(c.credentialNumber) & mask;
      while (table[s * CARD_STRIDE]! >= 0) s = (s + 1) & mask;
      const b = s * CARD_STRIDE;
      if (table[b] === CARD_EMPTY) sys.cardUsed_++;
      sys.cardLive_++;
      table[b] = c.credentialNumber;
      table[b + 1] = c.facilityCode ?? -1;
      table[b + 2] = i;
      table[b + 3] = sys.cardIds_.length;
      sys.cardIds_.push(c.id, holderId);
    } else sys.digitalById_.set(c.id, { id: c.id, holder_: i, pending_: c.credentialNumber === null, types_: types });
  }
}

/** Takes holder `i`'s `credentials` out of the card table (deleted marks) and the mobile map. */
export function removeCredentials(sys: CompiledSystem, i: number, credentials: readonly Credential[]): void {
  for (const c of credentials) {
    if (c.types.includes("card")) {
      if (c.credentialNumber === null) continue;
      if (typeof c.credentialNumber === "string") {
        if (sys.wideCards_.get(c.credentialNumber)?.holder_ === i) sys.wideCards_.delete(c.credentialNumber);
        continue;
      }
      const b = findCard(sys, c.credentialNumber);
      if (b < 0 || sys.cardTable_[b + 2] !== i) continue;
      sys.cardTable_[b] = CARD_DELETED;
      sys.cardLive_--;
    } else if (sys.digitalById_.get(c.id)?.holder_ === i) sys.digitalById_.delete(c.id);
  }
}

export function addPins(sys: CompiledSystem, h: Holder, i: number): void {
  if (h.pin !== null) addPin(sys, h.pin, i);
  if (h.duressPin !== null) addPin(sys, h.duressPin, i);
}

export function removePins(sys: CompiledSystem, h: Holder, i: number): void {
  if (h.pin !== null) removePin(sys, h.pin, i);
  if (h.duressPin !== null) removePin(sys, h.duressPin, i);
}
