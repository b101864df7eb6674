// The state a door keeps between scans (SPEC §15): who is inside each area and since when, and when a
// door waiting for its first person in saw its first allowed scan. The engine never keeps it: a
// decision reads it as an explicit input (`engine.decide(request, out, state)`), and `engine.record`
// moves it after a decision, so the decision stays a pure function the reference can check
// (docs/semantics.md AB1–AB8, UF2–UF3). The cloud node keeps one and stores it in its data file.

/** What a decision reads of the state (docs/semantics.md AB2–AB3, UF2). */
export interface AccessStateView {
  /** When the holder last entered the area (epoch ms); undefined when the holder is not inside. */
  enteredAt(areaId: string, holderId: string): number | undefined;
  /** How many holders are inside the area. */
  occupancy(areaId: string): number;
  /** The first allowed scan of the device's current unlock window (epoch ms); undefined when none. */
  firstAllowAt(deviceId: string): number | undefined;
}

/** The state as plain JSON: entry instants per area and holder, first allowed scans per device. */
export interface AccessStateJson {
  readonly areas: { readonly [areaId: string]: { readonly [holderId: string]: number } };
  readonly firstAllow: { readonly [deviceId: string]: number };
}

/**
 * The state of one node's doors and areas. Ids are Map keys (never object keys), so an id such as
 * `__proto__` is an id like any other.
 * @example
 * const state = new AccessState();
 * state.enter("lab", "holder-1", 1_795_000_000_000);
 * state.occupancy("lab"); //=> 1
 * state.enteredAt("lab", "holder-1"); //=> 1795000000000
 */
export class AccessState implements AccessStateView {
  readonly #areas = new Map<string, Map<string, number>>();
  readonly #firstAllow = new Map<string, number>();

  enteredAt(areaId: string, holderId: string): number | undefined {
    return this.#areas.get(areaId)?.get(holderId);
  }

  occupancy(areaId: string): number {
    return this.#areas.get(areaId)?.size ?? 0;
  }

  firstAllowAt(deviceId: string): number | undefined {
    return this.#firstAllow.get(deviceId);
  }

  /** The holder is inside the area since `at` (a second entry moves the instant). */
  enter(areaId: string, holderId: string, at: number): void {
    let inside = this.#areas.get(areaId);
    if (inside === undefined) {
      inside = new Map();
      this.#areas.set(areaId, inside);
    }
    inside.set(holderId, at);
  }

  /** The holder left the area (nothing when not inside). */
  exit(areaId: string, holderId: string): void {
    const inside = this.#areas.get(areaId);
    if (inside === undefined) return;
    inside.delete(holderId);
    if (inside.size === 0) this.#areas.delete(areaId);
  }

  /** Forgets the holder's entry (docs/semantics.md AB6): the same as an exit. */
  forgive(areaId: string, holderId: string): void {
    this.exit(areaId, holderId);
  }

  /** Empties the area (docs/semantics.md AB6). */
  resetArea(areaId: string): void {
    this.#areas.delete(areaId);
  }

  /** The device's first allowed scan of its current unlock window was at `at` (docs/semantics.md UF3). */
  setFirstAllow(deviceId: string, at: number): void {
    this.#firstAllow.set(deviceId, at);
  }

  /** Forgets the device's first allowed scan (a device gone from the system). */
  clearFirstAllow(deviceId: string): void {
    this.#firstAllow.delete(deviceId);
  }

  /** The ids of the devices with a first allowed scan. */
  firstAllowDevices(): string[] {
    return [...this.#firstAllow.keys()];
  }

  /** The holders inside an area with their entry instants, in entry order of the map. */
  inside(areaId: string): ReadonlyMap<string, number> {
    return this.#areas.get(areaId) ?? EMPTY;
  }

  /** The ids of the areas someone is inside. */
  areaIds(): string[] {
    return [...this.#areas.keys()];
  }

  toJSON(): AccessStateJson {
    const areas: Record<string, Record<string, number>> = {};
    for (const [a, inside] of this.#areas) Object.defineProperty(areas, a, field(Object.fromEntries(inside)));
    const firstAllow: Record<string, number> = {};
    for (const [d, at] of this.#firstAllow) Object.defineProperty(firstAllow, d, field(at));
    return { areas, firstAllow };
  }

  /** A state from its JSON (toJSON's shape); entries that are not finite numbers are left out. */
  static fromJSON(json: AccessStateJson): AccessState {
    const s = new AccessState();
    for (const [a, inside] of Object.entries(json.areas ?? {}))
      for (const [h, at] of Object.entries(inside)) if (Number.isFinite(at)) s.enter(a, h, at);
    for (const [d, at] of Object.entries(json.firstAllow ?? {})) if (Number.isFinite(at)) s.setFirstAllow(d, at);
    return s;
  }
}

const EMPTY: ReadonlyMap<string, number> = new Map();

/** An own enumerable property (defineProperty: a key `__proto__` is a key, not the prototype). */
function field<T>(value: T): PropertyDescriptor {
  return { value, enumerable: true, writable: true, configurable: true };
}
