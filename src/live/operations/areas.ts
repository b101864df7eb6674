// Areas (an addition to the API, docs/semantics.md AB1, AB6, AB9): create, update, delete, and the two
// commands an operator gives an area's state, reset and forgive. Who is inside an area is kept by
// its node (docs/semantics.md AB7), not here: the commands are ordinary writes of `lastReset` and
// `forgiven[holderId]`, so they reach the nodes through the change feed like any other change.
import { areaSchema } from "../../model/index.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { notFound, refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";

/** The fields of an area body: the snapshot Area's, without `id` and the state commands' fields (HS5). */
const AREA_FIELDS = ["name", "entries", "exits", "antiPassback", "occupancyLimit"];
const AREA_HINTS = {
  id: "An area's id is drawn by the system and never changes.",
  lastReset: "Is set by POST /areas/{area_id}/reset, not by a body.",
  forgiven: "Is set by POST /areas/{area_id}/forgive, not by a body.",
};

export function createArea(ctx: WriteContext): Created {
  const b = objectBody(ctx.body);
  onlyKeys(b, AREA_FIELDS, AREA_HINTS);
  const id = ctx.newId();
  ctx.append("areas", parseBody(areaSchema, { ...b, id }));
  return { status: 201, id };
}

/**
 * Replaces the area: `name` and `entries` are required; `exits`, `antiPassback` and `occupancyLimit`
 * left out are [], null and null. `lastReset` and `forgiven` are kept: they are the commands given so
 * far, and a PUT that dropped them would not undo them at the node anyway.
 */
export function updateArea(ctx: WriteContext): Created {
  const id = ctx.params.areaId!;
  const i = indexOf(ctx, "areas", id, "area");
  const b = objectBody(ctx.body);
  onlyKeys(b, AREA_FIELDS, AREA_HINTS);
  requireKeys(b, ["name", "entries"]);
  const { lastReset, forgiven } = ctx.base.areas[i]!;
  ctx.draft.areas[i] = parseBody(areaSchema, {
    ...b,
    id,
    ...(lastReset !== undefined ? { lastReset } : {}),
    ...(forgiven !== undefined ? { forgiven } : {}),
  });
  return NO_CONTENT;
}

export function deleteArea(ctx: WriteContext): Created {
  ctx.remove("areas", indexOf(ctx, "areas", ctx.params.areaId!, "area"));
  return NO_CONTENT;
}

/**
 * The instant a state command stores (ISO 8601, UTC, milliseconds): the service's now, or one
 * millisecond after the value it replaces when that is not earlier. A node applies a command when
 * the value changes (AB7), so two commands in one millisecond must still write two values.
 */
function commandInstant(ctx: WriteContext, previous: string | null | undefined): string {
  const before = previous === null || previous === undefined ? Number.NaN : Date.parse(previous);
  const now = ctx.now();
  return new Date(Number.isNaN(before) || now > before ? now : before + 1).toISOString();
}

/**
 * Empties the area (AB6): `lastReset` := now. Every earlier forgive is part of the reset, so
 * `forgiven` is cleared with it (one way `forgiven` stays bounded; a deleted holder's entry goes too).
 */
export function resetArea(ctx: WriteContext): Created {
  const i = indexOf(ctx, "areas", ctx.params.areaId!, "area");
  onlyKeys(objectBody(ctx.body ?? {}), []);
  const a = ctx.draft.areas[i]!;
  a.lastReset = commandInstant(ctx, a.lastReset);
  delete a.forgiven;
  return NO_CONTENT;
}

/** Forgets one holder's entry (AB6): `forgiven[holderId]` := now. The holder must exist (404 at `body.holderId`). */
export function forgiveArea(ctx: WriteContext): Created {
  const i = indexOf(ctx, "areas", ctx.params.areaId!, "area");
  const b = objectBody(ctx.body);
  onlyKeys(b, ["holderId"]);
  const holderId = b.holderId;
  if (typeof holderId !== "string" || holderId === "")
    refuse(
      400,
      holderId === undefined ? "required" : "invalidType",
      ["body", "holderId"],
      holderId === undefined ? "Is required: the id of the holder to forgive." : "Must be a holder id (a string).",
    );
  if (ctx.find("holders", holderId) < 0) notFound("holder", holderId, ["body", "holderId"]);
  const a = ctx.draft.areas[i]!;
  a.forgiven = { ...a.forgiven, [holderId]: commandInstant(ctx, a.forgiven?.[holderId]) };
  return NO_CONTENT;
}
