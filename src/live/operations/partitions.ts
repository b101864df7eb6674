// Partitions, their devices, and floor groups (seed 001 §4).
import { floorGroupSchema, partitionSchema } from "../../model/index.js";
import type { Issue } from "../../model/index.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, type Mutable, NO_CONTENT, type WriteContext, indexOf, removeAt } from "./common.js";
import { floorGroupReferrers, partitionReferrers, refuseIfReferenced } from "./referrers.js";

export function createPartition({ draft, body, newId }: WriteContext): Created {
  const b = objectBody(body);
  const id = newId();
  const p = parseBody(partitionSchema, { name: b.name, users: b.users, id });
  draft.partitions.push({ ...p, users: p.users ?? [] });
  return { status: 200, id };
}

export function updatePartition({ draft, params, body }: WriteContext): Created {
  const i = indexOf(draft.partitions, params.partitionId!, "partition");
  const b = objectBody(body);
  requireKeys(b, ["name", "users"]);
  const current = draft.partitions[i]!;
  const p = parseBody(partitionSchema, { id: current.id, name: b.name, users: b.users, default: current.default });
  current.name = p.name;
  current.users = p.users ?? [];
  for (const d of draft.devices) for (const e of d.partition) if (e.id === current.id) e.name = p.name;
  return NO_CONTENT;
}

export function deletePartition({ draft, params }: WriteContext): Created {
  const i = indexOf(draft.partitions, params.partitionId!, "partition");
  // The default partition is where unassigned floor groups land (and users start): it stays (semantics L7).
  if (draft.partitions[i]!.default)
    refuse(409, "conflict", ["partitions", i, "default"], `Partition "${params.partitionId}" is the default partition, which cannot be deleted.`);
  refuseIfReferenced(partitionReferrers(draft, params.partitionId!));
  removeAt(draft.partitions, i);
  return NO_CONTENT;
}

/** Overwrites which devices are in the partition (seed: include the existing ones to keep them). */
export function replacePartitionDevices({ draft, params, body }: WriteContext): Created {
  const p = draft.partitions[indexOf(draft.partitions, params.partitionId!, "partition")]!;
  const b = objectBody(body);
  requireKeys(b, ["devices"]);
  if (!Array.isArray(b.devices) || !b.devices.every((x) => typeof x === "string"))
    refuse(400, "invalidType", ["body", "devices"], "Must be an array of device ids (strings).");
  const wanted = new Set(b.devices as string[]);
  const known = new Set(draft.devices.map((d) => d.id));
  const unknown = (b.devices as string[]).flatMap((id, j): Issue[] =>
    known.has(id) ? [] : [{ code: "unknownReference", path: ["body", "devices", j], message: `Names device "${id}", which does not exist.` }],
  );
  if (unknown.length > 0) throw new Refusal(400, unknown);
  for (const d of draft.devices) {
    const k = d.partition.findIndex((e) => e.id === p.id);
    if (wanted.has(d.id) && k < 0) d.partition.push({ id: p.id, name: p.name, default: p.default });
    else if (!wanted.has(d.id) && k >= 0) d.partition.splice(k, 1);
  }
  return NO_CONTENT;
}

export function removePartitionDevice({ draft, params }: WriteContext): Created {
  const p = draft.partitions[indexOf(draft.partitions, params.partitionId!, "partition")]!;
  const d = draft.devices[indexOf(draft.devices, params.deviceId!, "device")]!;
  const k = d.partition.findIndex((e) => e.id === p.id);
  if (k < 0) refuse(404, "notFound", [], `Device "${d.id}" is not in partition "${p.id}".`);
  d.partition.splice(k, 1);
  return NO_CONTENT;
}

function floorGroupBody(draft: Mutable, body: unknown, id: string): ReturnType<typeof floorGroupSchema.parse> {
  const b = objectBody(body);
  requireKeys(b, ["name", "readerPort", "floors"]);
  // Seed: the partition defaults to the user's default partition; here, the system's default one.
  const partition = Object.hasOwn(b, "partition") ? b.partition : (draft.partitions.find((p) => p.default)?.id ?? null);
  return parseBody(floorGroupSchema, { name: b.name, partition, readerPort: b.readerPort, floors: b.floors, id });
}

export function createFloorGroup({ draft, body, newId }: WriteContext): Created {
  const id = newId();
  draft.floorGroups.push(floorGroupBody(draft, body, id));
  return { status: 200, id };
}

export function updateFloorGroup({ draft, params, body }: WriteContext): Created {
  const i = indexOf(draft.floorGroups, params.floorGroupId!, "floor group");
  draft.floorGroups[i] = floorGroupBody(draft, body, params.floorGroupId!);
  return NO_CONTENT;
}

export function deleteFloorGroup({ draft, params }: WriteContext): Created {
  const i = indexOf(draft.floorGroups, params.floorGroupId!, "floor group");
  refuseIfReferenced(floorGroupReferrers(draft, params.floorGroupId!));
  removeAt(draft.floorGroups, i);
  return NO_CONTENT;
}
