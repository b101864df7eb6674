// What every operation handler receives, and lookups over the draft snapshot.
import type { Draft } from "immer";
import type { SystemSnapshot } from "../../model/index.js";
import type { IdSource } from "../ids.js";
import { notFound } from "../operation.js";

export type Mutable = Draft<SystemSnapshot>;

export interface WriteContext {
  readonly draft: Mutable;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly newId: IdSource;
  /** The clock of `created` stamps, epoch milliseconds. */
  readonly now: () => number;
}

export interface ReadContext {
  readonly snapshot: SystemSnapshot;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

export interface Created {
  readonly status: 200 | 201 | 204;
  readonly id?: string;
}

/** Position of the element with `id` in `list`, or a 404 naming `what`. */
export function indexOf(list: readonly { readonly id: string }[], id: string, what: string): number {
  const i = list.findIndex((x) => x.id === id);
  if (i < 0) notFound(what, id);
  return i;
}

export const NO_CONTENT: Created = { status: 204 };

/**
 * Removes `list[i]` by moving the last element into its place: two patches whatever the list's
 * length (a splice would shift, and patch, every later element). Snapshot order carries no meaning:
 * every answer is ordered by id.
 */
export function removeAt<T>(list: T[], i: number): void {
  const last = list.length - 1;
  if (i !== last) list[i] = list[last]!;
  list.length = last;
}
