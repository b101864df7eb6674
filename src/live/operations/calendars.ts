// Calendars (an addition to the API, docs/semantics.md C1, C7): create, update, delete. The body is
// the snapshot Calendar without `id`; a calendar that rules still follow is not deleted (409 naming
// each rule), as a group that rules use.
import { calendarSchema } from "../../model/index.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";
import { calendarReferrers, refuseIfReferenced } from "./referrers.js";

/** The fields of a calendar body: the snapshot Calendar's, without `id` (HS5). */
const CALENDAR_FIELDS = ["name", "partition", "dates", "recurring"];
const CALENDAR_HINTS = { id: "A calendar's id is drawn by the system and never changes." };

export function createCalendar(ctx: WriteContext): Created {
  const b = objectBody(ctx.body);
  onlyKeys(b, CALENDAR_FIELDS, CALENDAR_HINTS);
  const id = ctx.newId();
  ctx.append("calendars", parseBody(calendarSchema, { ...b, id }));
  return { status: 201, id };
}

/** Replaces the calendar: `name` is required; `partition`, `dates` and `recurring` left out are null, [] and []. */
export function updateCalendar(ctx: WriteContext): Created {
  const id = ctx.params.calendarId!;
  const i = indexOf(ctx, "calendars", id, "calendar");
  const b = objectBody(ctx.body);
  onlyKeys(b, CALENDAR_FIELDS, CALENDAR_HINTS);
  requireKeys(b, ["name"]);
  ctx.draft.calendars[i] = parseBody(calendarSchema, { ...b, id });
  return NO_CONTENT;
}

export function deleteCalendar(ctx: WriteContext): Created {
  const id = ctx.params.calendarId!;
  const i = indexOf(ctx, "calendars", id, "calendar");
  refuseIfReferenced(calendarReferrers(ctx.base, id));
  ctx.remove("calendars", i);
  return NO_CONTENT;
}
