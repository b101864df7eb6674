// Checks of one card-format entry that zod's shape cannot express: layout names, bit ranges against the
// layout, overlapping fields, parity and fixed bits, parity coverage. Paths are relative to the entry.
import type { Issue, IssueCode } from "./issue.js";
import { type CardLayout, KNOWN_CARD_FORMATS, entryLayout, resolveParityCoverage } from "./cardFormats.js";
import type { CardFormat } from "./types.js";
import { quote } from "./zodIssues.js";

/**
 * Every problem of one card format, with paths relative to the entry. How the entry decodes follows
 * {@link entryLayout}: a `layout` string must name a well-known layout, and a well-known layout (named
 * by `layout` or, without one, by `id`) reads exactly its own length; a custom layout must fit its
 * frames; a raw format (no `layout`, an id outside the table) takes any bit range.
 */
export function validateCardFormat(f: CardFormat): Issue[] {
  const issues: Issue[] = [];
  const add = (code: IssueCode, path: (string | number)[], message: string) => issues.push({ code, path, message });
  if (f.min_input_bits > f.max_input_bits)
    add("invalidRange", ["max_input_bits"], `Must be at least min_input_bits (${f.min_input_bits}).`);
  if (f.facility_code === "FILTER_LIST" && f.allowed_facility_codes.length === 0)
    add("invalid", ["allowed_facility_codes"], "FILTER_LIST needs at least one allowed facility code.");
  const resolved = entryLayout(f);
  switch (resolved.kind) {
    case "custom":
      issues.push(...validateLayout(resolved.layout, f.min_input_bits));
      break;
    case "unknownName":
      add("unknownCardFormat", ["layout"], unknownLayoutMessage(resolved.name));
      break;
    case "known": {
      const known = resolved.layout;
      // Point at whichever bound is wrong (both when both are).
      for (const key of ["min_input_bits", "max_input_bits"] as const)
        if (f[key] !== known.bits)
          add(
            "invalidRange",
            [key],
            `${known.id} reads exactly ${known.bits} bits; set min_input_bits and max_input_bits to ${known.bits}.`,
          );
      break;
    }
    case "raw":
      break;
  }
  return issues;
}

/** Names the well-known layouts, and the one meant when `name` differs from it only in case. */
function unknownLayoutMessage(name: string): string {
  const names = Object.keys(KNOWN_CARD_FORMATS);
  const lower = name.toLowerCase();
  const near = names.find((n) => n.toLowerCase() === lower);
  return (
    `${quote(name)} is not a well-known layout${near === undefined ? "" : ` (did you mean "${near}"?)`}. ` +
    `Known layouts: ${names.join(", ")}; for any other frame give a layout object.`
  );
}

/** A custom layout must fit inside the shortest frame it admits (`minBits`). */
export function validateLayout(layout: CardLayout, minBits: number): Issue[] {
  const issues: Issue[] = [];
  const add = (code: IssueCode, path: (string | number)[], message: string) => issues.push({ code, path, message });
  const used = new Map<number, string>();
  // One issue per pair of users of the same bits (not one per bit: a 512-bit overlap is one mistake).
  const claim = (from: number, length: number, what: string, path: (string | number)[]) => {
    const clashes = new Map<string, number[]>();
    for (let pos = from; pos < from + length; pos++) {
      const prev = used.get(pos);
      if (prev === undefined) used.set(pos, what);
      else if (clashes.has(prev)) clashes.get(prev)!.push(pos);
      else clashes.set(prev, [pos]);
    }
    for (const [prev, bits] of clashes)
      add(
        "overlap",
        path,
        `${bits.length === 1 ? "Bit" : "Bits"} ${runs(bits)} ${bits.length === 1 ? "is" : "are"} used by both ${prev} and ${what}.`,
      );
  };
  const field = (name: "facilityCode" | "cardNumber") => {
    const fld = layout[name];
    if (fld === null) return;
    if (fld.offset + fld.length > minBits)
      add(
        "outOfRange",
        ["layout", name],
        `Bits ${fld.offset}–${fld.offset + fld.length - 1} do not fit in a ${minBits}-bit frame (min_input_bits).`,
      );
    claim(fld.offset, fld.length, name, ["layout", name]);
  };
  field("facilityCode");
  field("cardNumber");
  layout.parity.forEach((p, i) => {
    const path = ["layout", "parity", i];
    if (p.position >= minBits)
      add(
        "outOfRange",
        [...path, "position"],
        `Position ${p.position} is outside a ${minBits}-bit frame (min_input_bits).`,
      );
    claim(p.position, 1, `parity[${i}]`, [...path, "position"]);
    const covers = resolveParityCoverage(p);
    if (covers === null) add("invalid", path, "A parity bit covers either a range or a mask, exactly one of them.");
    else if (covers.length === 0) add("invalid", path, "A parity bit must cover at least one other bit.");
    else if (covers.some((c) => c >= minBits))
      add("outOfRange", path, `Covers bits outside a ${minBits}-bit frame (min_input_bits).`);
  });
  (layout.fixed ?? []).forEach((f, i) => {
    const path = ["layout", "fixed", i, "position"];
    if (f.position >= minBits)
      add("outOfRange", path, `Position ${f.position} is outside a ${minBits}-bit frame (min_input_bits).`);
    claim(f.position, 1, `fixed[${i}]`, path);
  });
  return issues;
}

/** Ascending positions as runs: `4–7, 9`. */
function runs(sorted: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return out.join(", ");
}
