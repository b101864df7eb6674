// Checks every collection shares: ids unique within the collection, names unique within the system,
// references that resolve.
import { quote } from "../zodIssues.js";
import type { Collection, Lookups, NamedCollection, Path, Report } from "./lookups.js";

/** An id used twice in a collection is reported at every element but the first valid one. */
export function checkId(coll: Collection, v: { id: string }, i: number, L: Lookups, add: Report): void {
  if (L.idOwner(coll, v.id) !== i) add("duplicateId", [coll, i, "id"], `Id ${quote(v.id)} is used twice in ${coll}.`);
}

/** A name used twice is reported at every element but the first, naming the first. */
export function checkName(coll: NamedCollection, what: string, v: { name: string }, i: number, L: Lookups, add: Report): void {
  const first = L.nameOwner(coll, v.name);
  if (first !== i)
    add("duplicateName", [coll, i, "name"], `${what} name ${quote(v.name)} is already used by ${coll}[${first}]; names are unique within a system.`);
}

/** True when `id` is null or names an element of `coll`; else reports an unknown reference. */
export function ref(L: Lookups, coll: Collection, id: string | null, path: Path, what: string, add: Report): boolean {
  if (id === null || L.has(coll, id)) return true;
  add("unknownReference", path, `Names ${what} ${quote(id)}, which is not in the snapshot.`);
  return false;
}
