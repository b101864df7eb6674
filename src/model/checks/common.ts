// Checks every collection shares: ids unique within the collection, names unique within the system,
// references that resolve.
import { quote } from "../zodIssues.js";
import type { Collection, Lookups, NamedCollection, Path, Report } from "./lookups.js";

/** An id used twice in a collection is reported at every element but the first valid one. */
export function checkId(coll: Collection, v: { id: string }, i: number, L: Lookups, add: Report): void {
  if (L.uniqueKeys?.[coll] === true) return;
  if (L.idOwner(coll, v.id) !== i) add("duplicateId", [coll, i, "id"], `Id ${quote(v.id)} is used twice in ${coll}.`);
}

/** A name used twice is reported at every element but the first, naming the first. */
export function checkName(
  coll: NamedCollection,
  what: string,
  v: { name: string },
  i: number,
  L: Lookups,
  add: Report,
): void {
  const first = L.nameOwner(coll, v.name);
  if (first !== i)
    add(
      "duplicateName",
      [coll, i, "name"],
      `${what} name ${quote(v.name)} is already used by ${coll}[${first}]; names are unique within a system.`,
    );
}

/** True when `id` is null or names an element of `coll`; else reports an unknown reference. */
export function ref(L: Lookups, coll: Collection, id: string | null, path: Path, what: string, add: Report): boolean {
  if (id === null || L.has(coll, id)) return true;
  add("unknownReference", path, unknownMessage(what, id));
  return false;
}

/**
 * `ref` for field `field` of element `i` of `owner` (its item `j` when j ≥ 0): the path is made only
 * for a report, since the checks of a whole snapshot make hundreds of thousands of these.
 */
export function refAt(
  L: Lookups,
  coll: Collection,
  id: string | null,
  owner: Collection,
  i: number,
  field: string,
  j: number,
  what: string,
  add: Report,
): boolean {
  if (id === null || L.has(coll, id)) return true;
  add("unknownReference", j < 0 ? [owner, i, field] : [owner, i, field, j], unknownMessage(what, id));
  return false;
}

function unknownMessage(what: string, id: string): string {
  return `Names ${what} ${quote(id)}, which is not in the snapshot.`;
}

/** True when some value appears twice in `list` (a pairwise scan for the short lists of the snapshot, a Set beyond). */
export function hasRepeats(list: readonly string[]): boolean {
  const n = list.length;
  if (n > 16) return new Set(list).size !== n;
  for (let a = 1; a < n; a++) for (let b = 0; b < a; b++) if (list[a] === list[b]) return true;
  return false;
}
