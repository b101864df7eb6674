// The secrecy filter of a subscription, applied per subscription on a copy of each event:
//   0 — nothing removed;
//   1 — PINs and every credential: `pin` and `duressPin`, credential lists, credential numbers and
//       facility codes, e-card numbers; an access event's `credential` becomes null; a credential's
//       own change event keeps only its `id` and its holder's id;
//   2 — level 1 and holder (1.0: person) names, email and photo.
// The walk is by key name over the whole event, so a field added to an entity later is filtered
// wherever it appears (docs/semantics.md W4).
import type { SecrecyLevel, WebhookEvent } from "./types.js";

const LEVEL_1 = new Set(["pin", "duressPin", "credentials", "credentialNumber", "facilityCode", "ecards"]);
const LEVEL_2 = new Set(["firstName", "lastName", "email", "photoUrl"]);

function strip(value: unknown, level: SecrecyLevel): unknown {
  if (Array.isArray(value)) return value.map((v) => strip(v, level));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (LEVEL_1.has(k)) continue;
    if (level === 2 && LEVEL_2.has(k)) continue;
    out[k] = k === "credential" ? null : strip(v, level);
  }
  return out;
}

/**
 * The event as a subscription of `level` may see it.
 * @param event - an access or change event (not modified).
 * @param level - the subscription's secrecy level.
 * @returns the event itself at level 0, else a filtered copy.
 * @example
 * filterEvent(event, 1).credential; //=> null
 */
export function filterEvent<E extends WebhookEvent>(event: E, level: SecrecyLevel): E {
  if (level === 0) return event;
  if ("entityType" in event && event.entityType === "credential") {
    const d = (typeof event.data === "object" && event.data !== null ? event.data : {}) as Record<string, unknown>;
    const owner =
      "holderId" in d ? { holderId: d.holderId } : "personId" in d ? { personId: d.personId } : { holderId: null };
    return { ...event, data: { id: d.id, ...owner } };
  }
  return strip(event, level) as E;
}
