// JSON text of a large snapshot in slices, so that storing it never holds the event loop for long:
// the slices, joined, are exactly `JSON.stringify(value)`. A snapshot of the live system is
// immutable (a write makes a new one and never edits an old one's lists, semantics L19), so it can
// be serialized a slice at a time while later writes go on.

/** Elements of a top-level list serialized at once. */
const ELEMENTS_PER_STEP = 64;

/**
 * The JSON text of `value` in slices of about `sliceChars` characters (a slice ends between two
 * elements of a top-level list, so one can be longer by an element). Only a plain object's top-level
 * lists are cut; anything else is one slice.
 */
export function* jsonSlices(value: unknown, sliceChars = 1 << 20): Generator<string> {
  if (
    value === null ||
    typeof value !== "object" ||
    Array.isArray(value) ||
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    yield JSON.stringify(value);
    return;
  }
  let buffer = "{";
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    // What JSON.stringify leaves out of an object.
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    buffer += `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (!Array.isArray(v) || v.length <= ELEMENTS_PER_STEP) {
      buffer += JSON.stringify(v);
    } else {
      buffer += "[";
      for (let i = 0; i < v.length; i += ELEMENTS_PER_STEP) {
        const text = JSON.stringify(v.slice(i, i + ELEMENTS_PER_STEP));
        buffer += `${i === 0 ? "" : ","}${text.slice(1, -1)}`;
        if (buffer.length >= sliceChars) {
          yield buffer;
          buffer = "";
        }
      }
      buffer += "]";
    }
    if (buffer.length >= sliceChars) {
      yield buffer;
      buffer = "";
    }
  }
  yield `${buffer}}`;
}
