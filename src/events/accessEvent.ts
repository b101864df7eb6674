// A decision as an access event. The event names the device, its node, the holder and the
// credential as the decision found them; it copies nothing else of the request, so a typed PIN
// never reaches an event.
import type { Decision, SystemSnapshot } from "../model/index.js";
import type { AccessEvent } from "./types.js";

/** Options of accessEvent. */
export interface AccessEventOptions {
  /** The event id; default a random UUID. */
  readonly id?: string;
  /** The scan instant when the request gives no `at` (epoch ms); default Date.now(). */
  readonly now?: number;
}

interface Index {
  readonly devices: ReadonlyMap<string, { name: string; cloudNode: string }>;
  readonly nodes: ReadonlyMap<string, string>;
  readonly holders: ReadonlyMap<string, { firstName: string | null; lastName: string | null }>;
}

// One index per snapshot: a burst of decisions between two writes looks names up in maps built once.
const indexes = new WeakMap<SystemSnapshot, Index>();

function indexOf(snapshot: SystemSnapshot): Index {
  let index = indexes.get(snapshot);
  if (index === undefined) {
    index = {
      devices: new Map(snapshot.devices.map((d) => [d.id, { name: d.name, cloudNode: d.cloudNode }])),
      nodes: new Map(snapshot.cloudNodes.map((n) => [n.id, n.name])),
      holders: new Map(
        snapshot.holders.map((h) => [h.id, { firstName: h.firstName ?? null, lastName: h.lastName ?? null }]),
      ),
    };
    indexes.set(snapshot, index);
  }
  return index;
}

/** The scan instant of a request as ISO 8601 UTC: its `at` (ISO string or epoch ms), else `now`. */
function instantOf(request: unknown, now: number): string {
  const at = typeof request === "object" && request !== null ? (request as { at?: unknown }).at : undefined;
  const ms = typeof at === "number" ? at : typeof at === "string" ? Date.parse(at.replace(",", ".")) : NaN;
  return new Date(Number.isFinite(ms) ? ms : now).toISOString();
}

/**
 * The access event of one decision.
 * @param decision - what the engine decided for `request`.
 * @param request - the access request (only its `deviceId` and `at` are read).
 * @param snapshot - the snapshot the decision was made on (names of the device, node and holder).
 * @param options - the event `id` and the `now` of a request without `at`.
 * @returns the event, topic `device.request.<outcome>`.
 * @example
 * const request = { deviceId: "door-ward-3", at: "2026-04-15T09:15:00-05:00", credential: { credentialNumber: 10234, facilityCode: 17 } };
 * accessEvent(engine.decide(request), request, engine.snapshot).topic; //=> "device.request.allowed"
 */
export function accessEvent(
  decision: Decision,
  request: unknown,
  snapshot: SystemSnapshot,
  options: AccessEventOptions = {},
): AccessEvent {
  const index = indexOf(snapshot);
  const deviceId =
    typeof request === "object" && request !== null ? (request as { deviceId?: unknown }).deviceId : undefined;
  const device = typeof deviceId === "string" ? index.devices.get(deviceId) : undefined;
  const holder = decision.holderId === null ? undefined : index.holders.get(decision.holderId);
  const read = decision.credentialId !== null || decision.credentialNumber !== null;
  return {
    topic: decision.topic,
    id: options.id ?? crypto.randomUUID(),
    occurredAt: instantOf(request, options.now ?? Date.now()),
    systemId: snapshot.systemId,
    cloudNode: device === undefined ? null : { id: device.cloudNode, name: index.nodes.get(device.cloudNode) ?? null },
    device: { id: typeof deviceId === "string" ? deviceId : "", name: device?.name ?? null },
    holder:
      decision.holderId === null
        ? null
        : { id: decision.holderId, firstName: holder?.firstName ?? null, lastName: holder?.lastName ?? null },
    credential: read
      ? { id: decision.credentialId, credentialNumber: decision.credentialNumber, facilityCode: decision.facilityCode }
      : null,
    reason: decision.reason,
    activeRuleId: decision.activeRuleId,
    duress: decision.duress,
    floors: [...decision.floors],
  };
}
