// Validation of a write against maintained indexes: the same checks as the snapshot loader
// (src/model/checks), run only on the elements a write touched and on the elements whose checks read
// them, against indexes of the current snapshot overlaid with the change. The verdict, the issues,
// their paths, messages and order are parseSnapshot's on the resulting snapshot.
import {
  type CardNumber,
  type Issue,
  type SystemSnapshot,
  die,
  fromZodIssues,
  holderSchema,
  zodMessage,
} from "../model/index.js";
import {
  COLLECTIONS,
  type Collection,
  type CredentialAt,
  type Lookups,
  NAMED_COLLECTIONS,
  type NamedCollection,
  PHASES,
  type ParsedEntities,
  type Report,
  SCHEMA_ORDER,
  checkHolderGroups,
  checkHolderRefs,
  entityKey,
  parseEntity,
  rawKey,
} from "../model/checks/index.js";
import type { Touched } from "./state.js";

type Entity = ParsedEntities[Collection];
type Loose = Record<string, unknown>;

/** A reference from elements of `from` to elements of `to`: the ids `keys` gives. */
interface Relation {
  readonly from: Collection;
  readonly to: Collection;
  readonly keys: (v: never) => readonly (string | null)[];
}
function relation<F extends Collection>(
  from: F,
  to: Collection,
  keys: (v: ParsedEntities[F]) => readonly (string | null)[],
): Relation {
  return { from, to, keys: keys as (v: never) => readonly (string | null)[] };
}

/** Every reference a check follows (docs/semantics.md S lines). */
const RELATIONS: readonly Relation[] = [
  relation("groups", "partitions", (g) => [g.partition]),
  relation("devices", "partitions", (d) => (d.partition ?? []).map((p) => p.id)),
  relation("floorGroups", "partitions", (f) => [f.partition]),
  relation("holders", "partitions", (h) => [h.partition]),
  relation("holders", "groups", (h) => h.groups),
  relation("rules", "groups", (r) => [r.groupId]),
  relation("connections", "cloudNodes", (x) => [x.cloudNode]),
  relation("devices", "cloudNodes", (d) => [d.cloudNode]),
  relation("devices", "connections", (d) => [d.connection]),
  relation("devices", "devices", (d) => [d.primaryReader]),
  relation("floorGroups", "devices", (f) => [f.readerPort, ...f.floors]),
  relation("rules", "devices", (r) => r.devices),
  relation("rules", "floorGroups", (r) => r.floorGroups),
  relation("customFields", "partitions", (d) => [d.partition]),
  relation("rules", "calendars", (r) => (r.calendar ? [r.calendar.id] : [])),
  relation("calendars", "partitions", (c) => [c.partition]),
  relation("areas", "devices", (a) => [...a.entries, ...a.exits]),
];
/** The position in RELATIONS of the reference from `from` to `to`. */
function relationOf(from: Collection, to: Collection): number {
  const k = RELATIONS.findIndex((r) => r.from === from && r.to === to);
  if (k < 0) die("unknownRelation", from, to);
  return k;
}

/** Where elements of a snapshot sit, and who references them. */
export interface SnapshotLookups {
  /** Position of the element with `id` in the list `c`; -1 when none. */
  readonly find: (c: Collection, id: string) => number;
  /** Positions (ascending) of the elements of `from` that reference the element `id` of `to`. */
  readonly referrers: (from: Collection, to: Collection, id: string) => number[];
}

/** Lookups by scanning `s` (for callers that keep no indexes: tests, benchmarks, one-off tools). */
export function scanningLookups(s: SystemSnapshot): SnapshotLookups {
  const list = (c: Collection) => s[c] as unknown as readonly Entity[];
  return {
    find: (c, id) => list(c).findIndex((x) => x.id === id),
    referrers: (from, to, id) => {
      const r = RELATIONS[relationOf(from, to)]!;
      return list(from).flatMap((x, i) => (r.keys(x as never).includes(id) ? [i] : []));
    },
  };
}

const RELATIONS_TO = new Map<Collection, number[]>();
RELATIONS.forEach((r, k) => RELATIONS_TO.set(r.to, [...(RELATIONS_TO.get(r.to) ?? []), k]));

/** The holders → groups relation (memberships). */
const HOLDER_GROUPS = RELATIONS.findIndex((r) => r.from === "holders" && r.to === "groups");
/** The devices → connections relation: a lockhub's check counts its referrers (Lookups.devicesOn). */
const DEVICES_ON_CONNECTION = RELATIONS.findIndex((r) => r.from === "devices" && r.to === "connections");
/**
 * Relations whose target's checks read how many referrers it has: a referrer that comes, goes or
 * moves re-checks the target it named before and the one it names now.
 */
const COUNTED_FROM = new Map<Collection, readonly number[]>([["devices", [DEVICES_ON_CONNECTION]]]);

/**
 * Checks that read every element of a collection sharing a key (a holder reads its partition's custom
 * fields): when such an element changes, the referrers of its key through `via` are checked again.
 */
const READ_BY_KEY: readonly { readonly coll: Collection; readonly key: (v: Loose) => unknown; readonly via: number }[] =
  [{ coll: "customFields", key: (d) => d.partition, via: relationOf("holders", "partitions") }];
/** Per partition, the custom fields of it (keys): the relation Overlay.customFieldsOf follows. */
const FIELDS_OF_PARTITION = relationOf("customFields", "partitions");

/** Fields of an element that checks of other elements read (beyond its existence). */
const CONTENT_READ: Partial<Record<Collection, readonly string[]>> = {
  connections: ["id", "cloudNode", "type"],
  devices: ["id", "type", "cloudNode"],
};

const NAMED = new Set<Collection>(NAMED_COLLECTIONS);
const portKey = (d: ParsedEntities["devices"]): string => `${d.connection}\u0000${d.port}`;
const NONE: CredentialAt = { i: -1, j: -1 };
const before = (a: CredentialAt, b: CredentialAt): boolean => a.i < b.i || (a.i === b.i && a.j < b.j);

function perCollection<T>(make: () => T): Record<Collection, T> {
  return Object.fromEntries(COLLECTIONS.map((c) => [c, make()])) as Record<Collection, T>;
}

/**
 * Indexes of one valid snapshot (the one they mirror): each element as parsed, ids, names, ports,
 * credential ids and numbers, and who references each id. Changes are journaled so that the
 * indexes can step back to a snapshot they mirrored before (a refused batch).
 */
class Indexes {
  readonly parsed: Record<Collection, (Entity | undefined)[]>;
  readonly ids = perCollection(() => new Map<string, number>());
  readonly names = perCollection(() => new Map<string, number>());
  readonly ports = new Map<string, number>();
  readonly numbers = new Map<CardNumber, CredentialAt>();
  readonly credentialIds = new Map<string, CredentialAt>();
  /** Per relation: referenced id → ids of the referrers. */
  readonly referrers: Map<string, Set<string>>[] = RELATIONS.map(() => new Map());
  #journal: (() => void)[] = [];

  /** `s` is valid and normalized (parseSnapshot's output, or one that parseSnapshot accepts unchanged). */
  constructor(s: SystemSnapshot) {
    this.parsed = perCollection(() => []);
    for (const c of COLLECTIONS) {
      const list = s[c] as unknown as Entity[];
      this.parsed[c] = [...list];
      list.forEach((v, i) => this.#insert(c, i, v, false));
    }
  }

  #set<K, V>(m: Map<K, V>, k: K, v: V, journal: boolean): void {
    if (journal) {
      const had = m.has(k);
      const old = m.get(k) as V;
      this.#journal.push(had ? () => m.set(k, old) : () => m.delete(k));
    }
    m.set(k, v);
  }
  #delete<K, V>(m: Map<K, V>, k: K, when: (v: V) => boolean): void {
    const old = m.get(k);
    if (old === undefined || !when(old)) return;
    this.#journal.push(() => m.set(k, old));
    m.delete(k);
  }
  #refer(m: Map<string, Set<string>>, to: string, from: string, journal: boolean): void {
    let set = m.get(to);
    if (set === undefined) m.set(to, (set = new Set()));
    if (set.has(from)) return;
    set.add(from);
    if (journal) this.#journal.push(() => set.delete(from));
  }
  #unrefer(m: Map<string, Set<string>>, to: string, from: string): void {
    const set = m.get(to);
    if (set === undefined || !set.delete(from)) return;
    this.#journal.push(() => set.add(from));
  }

  #insert(c: Collection, i: number, v: Entity, journal: boolean): void {
    this.#set(this.ids[c], entityKey(c, v), i, journal);
    if (NAMED.has(c)) this.#set(this.names[c], (v as { name: string }).name, i, journal);
    if (c === "devices") this.#set(this.ports, portKey(v as ParsedEntities["devices"]), i, journal);
    if (c === "holders")
      (v as ParsedEntities["holders"]).credentials.forEach((cred, j) => {
        this.#set(this.credentialIds, cred.id, { i, j }, journal);
        if (cred.credentialNumber !== null) this.#set(this.numbers, cred.credentialNumber, { i, j }, journal);
      });
    RELATIONS.forEach((r, k) => {
      if (r.from !== c) return;
      for (const to of r.keys(v as never))
        if (to !== null) this.#refer(this.referrers[k]!, to, entityKey(c, v), journal);
    });
  }

  #remove(c: Collection, i: number, v: Entity): void {
    this.#delete(this.ids[c], entityKey(c, v), (at) => at === i);
    if (NAMED.has(c)) this.#delete(this.names[c], (v as { name: string }).name, (at) => at === i);
    if (c === "devices") this.#delete(this.ports, portKey(v as ParsedEntities["devices"]), (at) => at === i);
    if (c === "holders")
      (v as ParsedEntities["holders"]).credentials.forEach((cred, j) => {
        const here = (at: CredentialAt) => at.i === i && at.j === j;
        this.#delete(this.credentialIds, cred.id, here);
        if (cred.credentialNumber !== null) this.#delete(this.numbers, cred.credentialNumber, here);
      });
    RELATIONS.forEach((r, k) => {
      if (r.from !== c) return;
      for (const to of r.keys(v as never)) if (to !== null) this.#unrefer(this.referrers[k]!, to, entityKey(c, v));
    });
  }

  /**
   * The keys an element changed in place (same id at the same index): only they are re-indexed. A
   * holder whose groups changed keeps its id, names and credentials; its other entries stay.
   */
  #diff(c: Collection, i: number, old: Entity, v: Entity): void {
    if (NAMED.has(c)) {
      const [a, b] = [(old as { name: string }).name, (v as { name: string }).name];
      if (a !== b) {
        this.#delete(this.names[c], a, (at) => at === i);
        this.#set(this.names[c], b, i, true);
      }
    }
    if (c === "devices") {
      const [a, b] = [portKey(old as ParsedEntities["devices"]), portKey(v as ParsedEntities["devices"])];
      if (a !== b) {
        this.#delete(this.ports, a, (at) => at === i);
        this.#set(this.ports, b, i, true);
      }
    }
    if (c === "holders") {
      const [a, b] = [(old as ParsedEntities["holders"]).credentials, (v as ParsedEntities["holders"]).credentials];
      if (a !== b) {
        a.forEach((cred, j) => {
          const here = (at: CredentialAt) => at.i === i && at.j === j;
          this.#delete(this.credentialIds, cred.id, here);
          if (cred.credentialNumber !== null) this.#delete(this.numbers, cred.credentialNumber, here);
        });
        b.forEach((cred, j) => {
          this.#set(this.credentialIds, cred.id, { i, j }, true);
          if (cred.credentialNumber !== null) this.#set(this.numbers, cred.credentialNumber, { i, j }, true);
        });
      }
    }
    RELATIONS.forEach((r, k) => {
      if (r.from !== c) return;
      const [a, b] = [r.keys(old as never), r.keys(v as never)];
      if (a.length === b.length && a.every((x, j) => x === b[j])) return;
      for (const to of a) if (to !== null && !b.includes(to)) this.#unrefer(this.referrers[k]!, to, entityKey(c, v));
      for (const to of b)
        if (to !== null && !a.includes(to)) this.#refer(this.referrers[k]!, to, entityKey(c, v), true);
    });
  }

  /** Moves the indexes to `next`, whose elements differ from the ones indexed only at `touched`. */
  advance(next: SystemSnapshot, touched: Changes): void {
    const inPlace = (c: Collection, old: Entity | undefined, v: Entity | null | undefined): old is Entity =>
      old !== undefined && v != null && entityKey(c, old) === entityKey(c, v);
    for (const [c, changes] of touched)
      for (const [i, v] of changes) {
        const old = this.parsed[c][i];
        if (old !== undefined && !inPlace(c, old, v)) this.#remove(c, i, old);
      }
    for (const [c, changes] of touched) {
      const list = this.parsed[c];
      const length = list.length;
      for (const [i, v] of changes) {
        const old = list[i];
        this.#journal.push(() => {
          list[i] = old;
        });
        list[i] = v ?? undefined;
        if (inPlace(c, old, v)) this.#diff(c, i, old, v!);
        else if (v) this.#insert(c, i, v, true);
      }
      const n = next[c].length;
      this.#journal.push(() => {
        list.length = length;
      });
      list.length = n;
    }
  }

  /** Where the journal stands: rollback(mark) steps back to here. */
  mark(): number {
    return this.#journal.length;
  }

  /** Steps back to what the indexes were at `mark` (a refused batch, a check, a preview). */
  rollback(mark: number): void {
    while (this.#journal.length > mark) this.#journal.pop()!();
  }

  /** Drops the journal: what the indexes mirror is committed. */
  forget(): void {
    this.#journal = [];
  }
}

/**
 * What a write changed, per collection: index → the element there now, as parsed (null when it
 * fails its schema, undefined when the index no longer exists).
 */
type Changes = Map<Collection, Map<number, Entity | null | undefined>>;

/** The changed elements of `next` as parsed, from what the change reached (state.ts). */
function changesIn(
  ix: Indexes,
  next: SystemSnapshot,
  touched: Touched,
  schemaIssues: Map<Collection, Map<number, Issue[]>>,
  membershipOnly: Set<number>,
): Changes {
  const out: Changes = new Map();
  for (const [c, t] of touched) {
    const list = next[c] as readonly unknown[];
    const changes = new Map<number, Entity | null | undefined>();
    for (const i of [...t.positions].sort((x, y) => x - y)) {
      if (i >= list.length) {
        if (i < ix.parsed[c].length) changes.set(i, undefined);
        continue;
      }
      const from = t.movedFrom.get(i);
      const moved = from === undefined ? undefined : ix.parsed[c][from];
      if (moved !== undefined) {
        changes.set(i, moved);
        continue;
      }
      const old = ix.parsed[c][i];
      const light = c === "holders" && old !== undefined && t.groupsOnly.has(i);
      const r = light
        ? parseGroups(old as ParsedEntities["holders"], (list[i] as Loose).groups, i)
        : parseEntity(c, list[i], i);
      if (r.ok && light) membershipOnly.add(i);
      if (r.ok) changes.set(i, r.v);
      else {
        changes.set(i, null);
        let m = schemaIssues.get(c);
        if (m === undefined) schemaIssues.set(c, (m = new Map()));
        m.set(i, r.issues);
      }
    }
    if (changes.size > 0) out.set(c, changes);
  }
  return out;
}

const groupsSchema = holderSchema.shape.groups;

/**
 * A holder of which only `groups` changed, parsed: the rest is the previous (valid) holder's. Exact:
 * the holder's schema reads `groups` in no refinement, so its other fields stay valid and parse the same.
 */
function parseGroups(
  old: ParsedEntities["holders"],
  groups: unknown,
  i: number,
): { ok: true; v: ParsedEntities["holders"] } | { ok: false; issues: Issue[] } {
  // Ids as the live routes write them (non-empty strings) parse to themselves: no schema run for
  // the 2,000 holders of a group being deleted. Anything else (group objects, bad values) does.
  if (Array.isArray(groups) && groups.every((g) => typeof g === "string" && g.length > 0))
    return { ok: true, v: { ...old, groups: groups.slice() } };
  const r = groupsSchema.safeParse(groups, { error: zodMessage });
  return r.success
    ? { ok: true, v: { ...old, groups: r.data } }
    : { ok: false, issues: fromZodIssues(r.error.issues, ["holders", i, "groups"]) };
}

/** The lookups of the resulting snapshot: the indexes where nothing changed, the touched elements elsewhere. */
class Overlay implements Lookups {
  readonly #ix: Indexes;
  readonly #touched: Changes;
  readonly #ids = new Map<Collection, Map<string, number>>();
  readonly #broken = new Map<Collection, Set<string>>();
  readonly #names = new Map<Collection, Map<string, number>>();
  readonly #ports = new Map<string, number>();
  readonly #numbers = new Map<CardNumber, CredentialAt>();
  readonly #credentialIds = new Map<string, CredentialAt>();
  /** Touched holders whose memberships alone changed: their keys stand in the indexes as they were. */
  readonly #light: ReadonlySet<number>;
  static readonly #EMPTY = new Map<number, never>();

  constructor(ix: Indexes, touched: Changes, raw: SystemSnapshot, light: ReadonlySet<number>) {
    this.#ix = ix;
    this.#touched = touched;
    this.#light = light;
    const first = <K, V>(m: Map<K, V>, k: K, v: V) => {
      if (!m.has(k)) m.set(k, v);
    };
    const of = <K, V>(m: Map<Collection, Map<K, V>>, c: Collection): Map<K, V> => {
      let x = m.get(c);
      if (x === undefined) m.set(c, (x = new Map()));
      return x;
    };
    // Touched indices ascend (changesIn sorts them), so the first one set is the first in the snapshot.
    for (const [c, changes] of touched)
      for (const [i, v] of changes) {
        if (v === null) {
          const id = rawKey(c, raw[c][i]);
          if (id !== undefined) {
            let set = this.#broken.get(c);
            if (set === undefined) this.#broken.set(c, (set = new Set()));
            set.add(id);
          }
          continue;
        }
        if (v === undefined || (c === "holders" && light.has(i))) continue;
        first(of(this.#ids, c), entityKey(c, v), i);
        if (NAMED.has(c)) first(of(this.#names, c), (v as { name: string }).name, i);
        if (c === "devices") first(this.#ports, portKey(v as ParsedEntities["devices"]), i);
        if (c === "holders")
          (v as ParsedEntities["holders"]).credentials.forEach((cred, j) => {
            first(this.#credentialIds, cred.id, { i, j });
            if (cred.credentialNumber !== null) first(this.#numbers, cred.credentialNumber, { i, j });
          });
      }
  }

  changes(c: Collection): Map<number, Entity | null | undefined> {
    return this.#touched.get(c) ?? Overlay.#EMPTY;
  }
  /** The index the indexes give for `key`, unless that element was touched; -1 when none. */
  #base(c: Collection, m: Map<string, number>, key: string): number {
    const b = m.get(key);
    return b === undefined || this.#replaced(c, b) ? -1 : b;
  }
  /** Whether the indexes' entries for the element at `i` may be stale (it was touched, other than in its memberships). */
  #replaced(c: Collection, i: number): boolean {
    return this.changes(c).has(i) && !(c === "holders" && this.#light.has(i));
  }
  #min(c: Collection, base: Map<string, number>, over: Map<string, number> | undefined, key: string): number {
    const b = this.#base(c, base, key);
    const o = over?.get(key) ?? -1;
    return b < 0 ? o : o < 0 ? b : Math.min(b, o);
  }
  /** The element at index i of the resulting snapshot, as parsed (undefined when invalid or gone). */
  at(c: Collection, i: number): Entity | undefined {
    const changes = this.changes(c);
    return changes.has(i) ? (changes.get(i) ?? undefined) : this.#ix.parsed[c][i];
  }

  has(c: Collection, id: string): boolean {
    return (
      this.#base(c, this.#ix.ids[c], id) >= 0 ||
      this.#ids.get(c)?.has(id) === true ||
      this.#broken.get(c)?.has(id) === true
    );
  }
  get<C extends Collection>(c: C, id: string): ParsedEntities[C] | undefined {
    const i = this.idOwner(c, id);
    return i < 0 ? undefined : (this.at(c, i) as ParsedEntities[C]);
  }
  idOwner(c: Collection, id: string): number {
    if (this.#broken.get(c)?.has(id) === true) return -1;
    return this.#min(c, this.#ix.ids[c], this.#ids.get(c), id);
  }
  nameOwner(c: NamedCollection, name: string): number {
    return this.#min(c, this.#ix.names[c], this.#names.get(c), name);
  }
  portOwner(connection: string, port: number): number {
    return this.#min("devices", this.#ix.ports, this.#ports, `${connection}\u0000${port}`);
  }
  devicesOn(connection: string): number {
    let n = this.#ix.referrers[DEVICES_ON_CONNECTION]!.get(connection)?.size ?? 0;
    for (const [i, v] of this.changes("devices")) {
      if ((this.#ix.parsed.devices[i] as ParsedEntities["devices"] | undefined)?.connection === connection) n--;
      if (v && (v as ParsedEntities["devices"]).connection === connection) n++;
    }
    return n;
  }
  #credential(base: CredentialAt | undefined, over: CredentialAt | undefined): CredentialAt {
    const b = base === undefined || this.#replaced("holders", base.i) ? undefined : base;
    if (b === undefined) return over ?? NONE;
    return over !== undefined && before(over, b) ? over : b;
  }
  credentialNumberOwner(n: CardNumber): CredentialAt {
    return this.#credential(this.#ix.numbers.get(n), this.#numbers.get(n));
  }
  credentialIdOwner(id: string): CredentialAt {
    return this.#credential(this.#ix.credentialIds.get(id), this.#credentialIds.get(id));
  }
  customFieldsOf(partition: string): ParsedEntities["customFields"][] {
    const keys = new Set(this.#ix.referrers[FIELDS_OF_PARTITION]!.get(partition));
    for (const v of this.changes("customFields").values())
      if (v && (v as ParsedEntities["customFields"]).partition === partition) keys.add(entityKey("customFields", v));
    const at: number[] = [];
    for (const key of keys) {
      const i = this.idOwner("customFields", key);
      if (i >= 0 && !at.includes(i)) at.push(i);
    }
    return at.sort((x, y) => x - y).map((i) => this.at("customFields", i) as ParsedEntities["customFields"]);
  }
  /** Indexes (not touched) that own a key of a touched element: their checks may now fail. */
  baseOwnersOf(c: Collection, v: Entity): number[] {
    const out: number[] = [];
    const push = (i: number) => i >= 0 && out.push(i);
    push(this.#base(c, this.#ix.ids[c], entityKey(c, v)));
    if (NAMED.has(c)) push(this.#base(c, this.#ix.names[c], (v as { name: string }).name));
    if (c === "devices") push(this.#base(c, this.#ix.ports, portKey(v as ParsedEntities["devices"])));
    if (c === "holders")
      for (const cred of (v as ParsedEntities["holders"]).credentials) {
        for (const at of [
          this.#ix.credentialIds.get(cred.id),
          cred.credentialNumber === null ? undefined : this.#ix.numbers.get(cred.credentialNumber),
        ])
          if (at !== undefined && !this.changes("holders").has(at.i)) out.push(at.i);
      }
    return out;
  }
}

/** Whether another touched holder holds one of `h`'s keys (its id, a credential's id or number). */
function claims(claimed: ReadonlySet<string | number>, h: ParsedEntities["holders"]): boolean {
  return (
    claimed.has(h.id) ||
    h.credentials.some((c) => claimed.has(c.id) || (c.credentialNumber !== null && claimed.has(c.credentialNumber)))
  );
}

function sameContent(c: Collection, a: Entity | undefined, b: Entity | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return (CONTENT_READ[c] ?? []).every((f) => (a as unknown as Loose)[f] === (b as unknown as Loose)[f]);
}

/**
 * Validates writes of one live system. It keeps indexes of the live state (built on first use),
 * follows accepted changes, and steps back to a mark (a refused batch, a check, a preview).
 */
export class WriteValidator {
  #ix: Indexes | undefined;

  /** The indexes of `state` (the live system's current state), built when there are none. */
  #of(state: SystemSnapshot): Indexes {
    this.#ix ??= new Indexes(state);
    return this.#ix;
  }

  /** Where each id sits in `state` now (a write's handler finds its element here instead of scanning). */
  lookups(state: SystemSnapshot): SnapshotLookups {
    const ix = this.#of(state);
    return {
      find: (c, id) => ix.ids[c].get(id) ?? -1,
      referrers: (from, to, id) => {
        const ids = ix.referrers[relationOf(from, to)]!.get(id);
        const out: number[] = [];
        if (ids !== undefined) for (const r of ids) out.push(ix.ids[from].get(r)!);
        return out.sort((x, y) => x - y);
      },
    };
  }

  /** A point to step back to (rollback); the indexes are built first when there are none. */
  mark(state: SystemSnapshot): number {
    return this.#of(state).mark();
  }

  /** Steps the indexes back to `mark`; the caller has taken the changes after it back from the state. */
  rollback(mark: number): void {
    this.#ix?.rollback(mark);
  }

  /** What the indexes mirror now is committed: nothing before it is stepped back to. */
  commit(): void {
    this.#ix?.forget();
  }

  /**
   * The state was replaced as a whole: the indexes are made of `parsed` (parseSnapshot's output of
   * the new state, element for element), or built again on next use.
   */
  reset(parsed?: SystemSnapshot): void {
    this.#ix = parsed === undefined ? undefined : new Indexes(parsed);
  }

  /**
   * The issues of `next`, the live state after a change that reached `touched` (made in place),
   * exactly as parseSnapshot(next) reports them; empty when `next` is valid, and the indexes then
   * mirror `next`. Call it with the indexes mirroring the state before the change.
   */
  validate(next: SystemSnapshot, touched: Touched): readonly Issue[] {
    const ix = this.#of(next);
    const schemaIssues = new Map<Collection, Map<number, Issue[]>>();
    /** Holders of which only `groups` changed (valid): only their groups can have become wrong. */
    const membershipOnly = new Set<number>();
    const changes = changesIn(ix, next, touched, schemaIssues, membershipOnly);
    // A copy: a holder checked in full below (its keys claimed) keeps its unchanged keys in the indexes.
    const L = new Overlay(ix, changes, next, new Set(membershipOnly));
    const scopes = scopesOfChange(ix, L, changes, membershipOnly, next);
    const issues = runChecks(L, scopes, membershipOnly, schemaIssues);
    if (issues.length === 0) ix.advance(next, changes);
    return issues;
  }
}

/**
 * Which valid elements to check after a change: the touched ones, the untouched owners of their keys,
 * and the referrers of an id whose existence (or whose content that checks read) changed.
 */
function scopesOfChange(
  ix: Indexes,
  L: Overlay,
  touched: Changes,
  membershipOnly: Set<number>,
  next: SystemSnapshot,
): Map<Collection, Set<number>> {
  const scopes = new Map<Collection, Set<number>>();
  const scope = (c: Collection): Set<number> => {
    let set = scopes.get(c);
    if (set === undefined) scopes.set(c, (set = new Set()));
    return set;
  };
  /** The keys (ids, credential ids and numbers) of the other touched holders: one a membership-only holder holds too makes it checked in full. */
  const claimed = new Set<string | number>();
  for (const [i, v] of touched.get("holders") ?? [])
    if (v && !membershipOnly.has(i)) {
      claimed.add(v.id);
      for (const cred of (v as ParsedEntities["holders"]).credentials) {
        claimed.add(cred.id);
        if (cred.credentialNumber !== null) claimed.add(cred.credentialNumber);
      }
    }
  /** Touched elements are in scope already, except holders whose memberships alone changed. */
  const covered = (c: Collection, at: number, via = -1): boolean =>
    L.changes(c).has(at) && (via === HOLDER_GROUPS || !(c === "holders" && membershipOnly.has(at)));
  for (const [c, changes] of touched)
    for (const [i, v] of changes) {
      // Same id, credentials, partition and values: no owner, referrer or count changed with it.
      // Unless another change claims its id or a credential: then it is checked in full.
      if (c === "holders" && membershipOnly.has(i)) {
        if (claimed.size === 0 || !claims(claimed, v as ParsedEntities["holders"])) continue;
        membershipOnly.delete(i);
      }
      if (v) {
        scope(c).add(i);
        for (const j of L.baseOwnersOf(c, v)) scope(c).add(j);
      }
      const old = ix.parsed[c][i];
      for (const k of COUNTED_FROM.get(c) ?? []) {
        const r = RELATIONS[k]!;
        for (const e of [old, v])
          if (e)
            for (const to of r.keys(e as never)) {
              const at = to === null ? undefined : ix.ids[r.to].get(to);
              if (at !== undefined && !covered(r.to, at)) scope(r.to).add(at);
            }
      }
      const raw = i < next[c].length ? (next[c][i] as unknown as Loose | null) : undefined;
      const rawId = rawKey(c, raw);
      const ids = new Set<string>();
      if (old !== undefined) ids.add(entityKey(c, old));
      if (rawId !== undefined) ids.add(rawId);
      for (const r of READ_BY_KEY) {
        if (r.coll !== c) continue;
        for (const key of new Set([old && r.key(old as unknown as Loose), raw && r.key(raw)]))
          if (typeof key === "string")
            for (const from of ix.referrers[r.via]!.get(key) ?? []) {
              const at = ix.ids[RELATIONS[r.via]!.from].get(from);
              if (at !== undefined && !covered(RELATIONS[r.via]!.from, at)) scope(RELATIONS[r.via]!.from).add(at);
            }
      }
      for (const id of ids) {
        const wasAt = ix.ids[c].get(id);
        const before = wasAt === undefined ? undefined : ix.parsed[c][wasAt];
        const changed =
          (before !== undefined) !== L.has(c, id) ||
          (CONTENT_READ[c] !== undefined && !sameContent(c, before, L.get(c, id)));
        if (v === null && wasAt !== undefined && !covered(c, wasAt)) scope(c).add(wasAt);
        if (!changed) continue;
        for (const k of RELATIONS_TO.get(c) ?? []) {
          const r = RELATIONS[k]!;
          for (const from of ix.referrers[k]!.get(id) ?? []) {
            const at = ix.ids[r.from].get(from);
            // A holder whose memberships alone changed has its groups checked anyway.
            if (at !== undefined && !covered(r.from, at, k)) scope(r.from).add(at);
          }
        }
      }
    }
  return scopes;
}

/** Runs the checks of every phase on the elements in scope, in snapshot order; the schema issues first. */
function runChecks(
  L: Overlay,
  scopes: Map<Collection, Set<number>>,
  membershipOnly: Set<number>,
  schemaIssues: Map<Collection, Map<number, Issue[]>>,
): Issue[] {
  const scope = (c: Collection): Set<number> => {
    let set = scopes.get(c);
    if (set === undefined) scopes.set(c, (set = new Set()));
    return set;
  };
  const issues: Issue[] = [];
  for (const c of SCHEMA_ORDER) {
    const m = schemaIssues.get(c);
    if (m !== undefined) for (const i of [...m.keys()].sort((x, y) => x - y)) issues.push(...m.get(i)!);
  }
  const add: Report = (code, path, message) => issues.push({ code, path, message });
  const sorted = new Map<Collection, number[]>();
  const holders = scope("holders");
  const withMemberships = [...new Set([...holders, ...membershipOnly])].sort((x, y) => x - y);
  for (const { coll, check } of PHASES) {
    if (check === checkHolderRefs) {
      // In snapshot order, like every phase; a holder whose memberships alone changed runs only
      // the part of the check that reads them (its other parts passed and read nothing that changed).
      for (const i of withMemberships) {
        const v = L.at("holders", i);
        if (v !== undefined) (holders.has(i) ? checkHolderRefs : checkHolderGroups)(v as never, i, L, add);
      }
      continue;
    }
    const set = scopes.get(coll);
    if (set === undefined) continue;
    let order = sorted.get(coll);
    if (order === undefined) sorted.set(coll, (order = [...set].sort((x, y) => x - y)));
    for (const i of order) {
      const v = L.at(coll, i);
      if (v !== undefined) check(v as never, i, L, add);
    }
  }
  return issues;
}
