// What every operation handler receives, and lookups over the draft snapshot.
import type { Draft } from "immer";
import type { Issue, SystemSnapshot } from "../../model/index.js";
import type { Collection } from "../../model/checks/index.js";
import type { IdSource } from "../ids.js";
import { notFound } from "../operation.js";
import { reportBody } from "../body.js";

export type Mutable = Draft<SystemSnapshot>;

/** What a write handler needs besides the snapshot: the route's params, the body, ids and the clock. */
export interface WriteInput {
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly newId: IdSource;
  /** The clock of `created` stamps, epoch milliseconds. */
  readonly now: () => number;
}

export interface WriteContext extends WriteInput {
  readonly draft: Mutable;
  /**
   * The snapshot the draft started from (plain and frozen): read lists here, not through the draft,
   * where every element read becomes a proxy that immer then finalizes.
   */
  readonly base: SystemSnapshot;
  /** Position of the element with `id` in `base[c]` (a maintained index, not a scan); -1 when none. */
  readonly find: (c: Collection, id: string) => number;
  /** Positions in `base[from]` (ascending) of the elements that reference the element `id` of `to`. */
  readonly referrers: (from: Collection, to: Collection, id: string) => number[];
  /**
   * Appends an element to a top-level list. Top-level lists change only through `append` and
   * `remove`, applied after the draft is finished: a list of 100,000 holders is then copied once,
   * and its patches do not visit every element.
   */
  readonly append: (c: Collection, value: unknown) => void;
  /**
   * Removes `base[c][i]` by moving the last element into its place: two patches whatever the list's
   * length. Snapshot order carries no meaning (every answer is ordered by id). Call it last: the
   * list is changed after the draft is finished.
   */
  readonly remove: (c: Collection, i: number) => void;
  /**
   * Replaces one field of `base[c][i]`, like `draft[c][i][key] = value` but without a draft of the
   * element (a change of 2,000 holders' groups makes no proxies). Not for an element the draft also changes.
   */
  readonly setField: (c: Collection, i: number, key: string, value: unknown) => void;
}

export interface Created {
  readonly status: 200 | 201 | 204;
  readonly id?: string;
}

/** Position of the element with `id` in the snapshot's list `c`, or a 404 naming `what`. */
export function indexOf(ctx: WriteContext, c: Collection, id: string, what: string): number {
  const i = ctx.find(c, id);
  if (i < 0) notFound(what, id);
  return i;
}

/** Position of the element with `id` in a short list (a holder's credentials), or a 404 naming `what`. */
export function positionIn(list: readonly { readonly id: string }[], id: string, what: string): number {
  const i = list.findIndex((x) => x.id === id);
  if (i < 0) notFound(what, id);
  return i;
}

export const NO_CONTENT: Created = { status: 204 };

/**
 * Refuses the fields of a write body that the route does not take (HS5): each at `body.<field>`, with
 * `hints[field]` as its sentence when given (where that field is written instead), else the fields
 * the route takes. A field the route would silently drop is a change the client believes was made.
 * Collected with the body's other problems while a frame is open (HS6).
 */
export function onlyKeys(
  body: Record<string, unknown>,
  allowed: readonly string[],
  hints: Readonly<Record<string, string>> = {},
): void {
  const issues: Issue[] = Object.keys(body)
    // A key whose value is undefined is absent, as JSON has it (a library caller's spread leaves such keys).
    .filter((k) => !allowed.includes(k) && body[k] !== undefined)
    .map((k) => ({
      code: "unknownField",
      path: ["body", k],
      message: hints[k] ?? `Is not a field of this route; it takes ${allowed.join(", ")}.`,
    }));
  reportBody(issues);
}
