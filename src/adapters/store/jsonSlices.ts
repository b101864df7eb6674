// JSON text of a large snapshot in slices, so that storing it never holds the event loop for long:
// the slices, joined, are exactly `JSON.stringify(value)`. A snapshot of the live system is
// immutable (a write makes a new one and never edits an old one's lists, semantics L19), so it can
// be serialized a slice at a time while later writes go on. Its entities are frozen and a change
// replaces the ones it touches, so a store keeps the text of each run of entities of its last
// snapshot (JsonChunkCache) and the next snapshot serializes only the runs that changed.

/** Elements of a top-level list serialized at once. */
const ELEMENTS_PER_STEP = 64;

/** Milliseconds of serializing between two turns of the event loop (jsonPartsInTurns). */
const STEP_MS = 2;

/**
 * How long a background serialization pauses after a step, per millisecond the step took: 3 leaves
 * the event loop three quarters of the time (a snapshot of 100,000 holders takes ~0.6 s of work, which
 * back to back with requests took half of the loop while it lasted), at most MAX_PAUSE_MS at once.
 */
const PAUSE_PER_WORK = 3;
const MAX_PAUSE_MS = 50;

/** One run of a list's elements and its JSON text (without the brackets). */
interface Chunk {
  readonly elements: readonly unknown[];
  readonly text: string;
}

/**
 * The texts of the runs of ELEMENTS_PER_STEP elements of each top-level list of the last value
 * serialized with it, by list and position. A run's text is used again only when each of its elements
 * is the very same frozen object (which cannot have changed): at 100,000 holders a snapshot after a
 * thousand changes serializes a few hundred of its ~1,600 runs. Holds those texts (about the size of
 * the JSON) and the runs' elements until the next value.
 */
export class JsonChunkCache {
  readonly #lists = new Map<string, (Chunk | undefined)[]>();

  /** The text of `list[at, at + ELEMENTS_PER_STEP)`, without the brackets. */
  chunk(key: string, list: readonly unknown[], at: number): string {
    let chunks = this.#lists.get(key);
    if (chunks === undefined) this.#lists.set(key, (chunks = []));
    const k = at / ELEMENTS_PER_STEP;
    const end = Math.min(list.length, at + ELEMENTS_PER_STEP);
    const hit = chunks[k];
    if (hit !== undefined && hit.elements.length === end - at && hit.elements.every((e, j) => e === list[at + j]))
      return hit.text;
    const elements = list.slice(at, end);
    const text = JSON.stringify(elements).slice(1, -1);
    chunks[k] = elements.every((e) => typeof e !== "object" || e === null || Object.isFrozen(e))
      ? { elements, text }
      : undefined;
    return text;
  }

  /** Forgets what the last value had beyond `lists` (its top-level lists of more than one run) and their lengths. */
  keep(lists: ReadonlyMap<string, number>): void {
    for (const [key, chunks] of this.#lists) {
      const length = lists.get(key);
      if (length === undefined) this.#lists.delete(key);
      else chunks.length = Math.ceil(length / ELEMENTS_PER_STEP);
    }
  }
}

/**
 * The JSON text of `value` in small pieces, each the text of at most ELEMENTS_PER_STEP elements of a
 * top-level list or of one other top-level member (a few tenths of a millisecond each for entities).
 * Only a plain object's top-level lists are cut; anything else is one piece.
 * @param cache - the texts of the last value's runs, used again where unchanged (and updated).
 */
export function* jsonSteps(value: unknown, cache?: JsonChunkCache): Generator<string> {
  if (
    value === null ||
    typeof value !== "object" ||
    Array.isArray(value) ||
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    yield JSON.stringify(value);
    return;
  }
  let first = true;
  let open = "{";
  const lists = new Map<string, number>();
  for (const [key, v] of Object.entries(value)) {
    // What JSON.stringify leaves out of an object.
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    const head = `${open}${first ? "" : ","}${JSON.stringify(key)}:`;
    open = "";
    first = false;
    if (!Array.isArray(v) || v.length <= ELEMENTS_PER_STEP) {
      yield head + JSON.stringify(v);
      continue;
    }
    lists.set(key, v.length);
    for (let i = 0; i < v.length; i += ELEMENTS_PER_STEP) {
      const text = cache?.chunk(key, v, i) ?? JSON.stringify(v.slice(i, i + ELEMENTS_PER_STEP)).slice(1, -1);
      yield `${i === 0 ? `${head}[` : ","}${text}`;
    }
    yield "]";
  }
  cache?.keep(lists);
  yield `${open}}`;
}

/**
 * The JSON text of `value` in slices of about `sliceChars` characters (a slice ends between two
 * elements of a top-level list, so one can be longer by a step's elements).
 */
export function* jsonSlices(value: unknown, sliceChars = 1 << 20): Generator<string> {
  let buffer = "";
  for (const step of jsonSteps(value)) {
    buffer += step;
    if (buffer.length >= sliceChars) {
      yield buffer;
      buffer = "";
    }
  }
  if (buffer !== "") yield buffer;
}

/** Lets the event loop run (requests, writes) between two steps of a long job. */
export const turn = (): Promise<void> => new Promise<void>((resolveTurn) => setImmediate(resolveTurn));

const pause = (ms: number) => new Promise<void>((resolvePause) => setTimeout(resolvePause, ms));

/**
 * jsonSlices, serialized a couple of milliseconds at a time (the time the caller takes with a part
 * counts too) with the event loop free in between: no request waits behind the serialization of a
 * snapshot for longer than one step. `background`: after each step, a pause three times as long
 * (PAUSE_PER_WORK), so a snapshot taken while requests come never takes more than a quarter of the
 * loop; otherwise (a closing server) one turn.
 */
export async function* jsonPartsInTurns(
  value: unknown,
  partChars: number,
  background = true,
  cache?: JsonChunkCache,
): AsyncGenerator<string> {
  let buffer = "";
  let since = performance.now();
  for (const step of jsonSteps(value, cache)) {
    buffer += step;
    if (buffer.length >= partChars) {
      yield buffer;
      buffer = "";
    }
    const worked = performance.now() - since;
    if (worked >= STEP_MS) {
      await (background ? pause(Math.min(PAUSE_PER_WORK * worked, MAX_PAUSE_MS)) : turn());
      since = performance.now();
    }
  }
  if (buffer !== "") yield buffer;
}

/** The whole JSON text of `value`, serialized as jsonPartsInTurns does (a store that writes it in one statement). */
export async function jsonTextInTurns(value: unknown, background = true, cache?: JsonChunkCache): Promise<string> {
  const parts: string[] = [];
  for await (const part of jsonPartsInTurns(value, 1 << 20, background, cache)) parts.push(part);
  return parts.join("");
}
