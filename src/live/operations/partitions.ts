// Partitions, their devices, and floor groups (the 2.0 systems API).
import { floorGroupSchema, partitionSchema } from "../../model/index.js";
import type { Issue } from "../../model/index.js";
import { objectBody, parseBody, requireKeys } from "../body.js";
import { Refusal, refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf } from "./common.js";
import { floorGroupReferrers, partitionReferrers, refuseIfReferenced } from "./referrers.js";

export function createPartition(ctx: WriteContext): Created {
  const { body, newId } = ctx;
  const b = objectBody(body);
  const id = newId();
  const p = parseBody(partitionSchema, { name: b.name, users: b.users, id });
  ctx.append("partitions", { ...p, users: p.users ?? [] });
  return { status: 200, id };
}

export function updatePartition(ctx: WriteContext): Created {
  const { draft, base, params, body } = ctx;
  const i = indexOf(ctx, "partitions", params.partitionId!, "partition");
  const b = objectBody(body);
  requireKeys(b, ["name", "users"]);
  const current = draft.partitions[i]!;
  const p = parseBody(partitionSchema, { id: current.id, name: b.name, users: b.users, default: current.default });
  current.name = p.name;
  current.users = p.users ?? [];
  base.devices.forEach((d, j) =>
    d.partition.forEach((e, k) => {
      if (e.id === current.id) draft.devices[j]!.partition[k]!.name = p.name;
    }),
  );
  return NO_CONTENT;
}

export function deletePartition(ctx: WriteContext): Created {
  const { base, params } = ctx;
  const i = indexOf(ctx, "partitions", params.partitionId!, "partition");
  // The default partition is where unassigned floor groups land (and users start): it stays (semantics L7).
  if (base.partitions[i]!.default)
    refuse(
      409,
      "conflict",
      ["partitions", i, "default"],
      `Partition "${params.partitionId}" is the default partition, which cannot be deleted.`,
    );
  refuseIfReferenced(partitionReferrers(base, params.partitionId!));
  ctx.remove("partitions", i);
  return NO_CONTENT;
}

/** Overwrites which devices are in the partition (seed: include the existing ones to keep them). */
export function replacePartitionDevices(ctx: WriteContext): Created {
  const { draft, base, params, body } = ctx;
  const p = base.partitions[indexOf(ctx, "partitions", params.partitionId!, "partition")]!;
  const b = objectBody(body);
  requireKeys(b, ["devices"]);
  if (!Array.isArray(b.devices) || !b.devices.every((x) => typeof x === "string"))
    refuse(400, "invalidType", ["body", "devices"], "Must be an array of device ids (strings).");
  const wanted = new Set(b.devices as string[]);
  const unknown = (b.devices as string[]).flatMap((id, j): Issue[] =>
    ctx.find("devices", id) >= 0
      ? []
      : [
          {
            code: "unknownReference",
            path: ["body", "devices", j],
            message: `Names device "${id}", which does not exist.`,
          },
        ],
  );
  if (unknown.length > 0) throw new Refusal(400, unknown);
  base.devices.forEach((d, j) => {
    const k = d.partition.findIndex((e) => e.id === p.id);
    if (wanted.has(d.id) && k < 0) draft.devices[j]!.partition.push({ id: p.id, name: p.name, default: p.default });
    else if (!wanted.has(d.id) && k >= 0) draft.devices[j]!.partition.splice(k, 1);
  });
  return NO_CONTENT;
}

export function removePartitionDevice(ctx: WriteContext): Created {
  const { draft, params } = ctx;
  const p = ctx.base.partitions[indexOf(ctx, "partitions", params.partitionId!, "partition")]!;
  const d = draft.devices[indexOf(ctx, "devices", params.deviceId!, "device")]!;
  const k = d.partition.findIndex((e) => e.id === p.id);
  if (k < 0) refuse(404, "notFound", [], `Device "${d.id}" is not in partition "${p.id}".`);
  d.partition.splice(k, 1);
  return NO_CONTENT;
}

function floorGroupBody({ base }: WriteContext, body: unknown, id: string): ReturnType<typeof floorGroupSchema.parse> {
  const b = objectBody(body);
  requireKeys(b, ["name", "readerPort", "floors"]);
  // Seed: the partition defaults to the user's default partition; here, the system's default one.
  const partition = Object.hasOwn(b, "partition") ? b.partition : (base.partitions.find((p) => p.default)?.id ?? null);
  return parseBody(floorGroupSchema, { name: b.name, partition, readerPort: b.readerPort, floors: b.floors, id });
}

export function createFloorGroup(ctx: WriteContext): Created {
  const id = ctx.newId();
  ctx.append("floorGroups", floorGroupBody(ctx, ctx.body, id));
  return { status: 200, id };
}

export function updateFloorGroup(ctx: WriteContext): Created {
  const i = indexOf(ctx, "floorGroups", ctx.params.floorGroupId!, "floor group");
  ctx.draft.floorGroups[i] = floorGroupBody(ctx, ctx.body, ctx.params.floorGroupId!);
  return NO_CONTENT;
}

export function deleteFloorGroup(ctx: WriteContext): Created {
  const i = indexOf(ctx, "floorGroups", ctx.params.floorGroupId!, "floor group");
  refuseIfReferenced(floorGroupReferrers(ctx.base, ctx.params.floorGroupId!));
  ctx.remove("floorGroups", i);
  return NO_CONTENT;
}
