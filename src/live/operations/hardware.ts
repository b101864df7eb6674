// Cloud nodes, connections and devices (the 2.0 systems API), with their create/update required fields,
// defaults, and deletes refused while something references them.
import {
  THREAT_LEVEL_MAX,
  cloudNodeSchema,
  connectionSchema,
  defaultCardFormat,
  deviceSchema,
} from "../../model/index.js";
import type { CloudNode, Device } from "../../model/index.js";
import {
  configureNetwork,
  connectionFields,
  objectBody,
  parseBody,
  parseConnectionBody,
  pick,
  requireKeys,
} from "../body.js";
import { notFound, refuse } from "../operation.js";
import { type Created, NO_CONTENT, type WriteContext, indexOf, onlyKeys } from "./common.js";
import { cloudNodeReferrers, connectionReferrers, deviceReferrers, refuseIfReferenced } from "./referrers.js";

const NODE_WRITABLE = [
  "name",
  "description",
  "serialNumber",
  "ecards",
  "offlinePolicy",
  "killTimer",
  "timezone",
  "locale",
  "cardFormat",
  "credentialResetsPerMonth",
];

/** A node as the snapshot loader normalizes it: the effective zone, and the default format when none is listed. */
function normalizeNode(n: ReturnType<typeof cloudNodeSchema.parse>, systemZone: string): CloudNode {
  return {
    ...n,
    timezone: n.timezone ?? systemZone,
    ecards: n.ecards ?? [],
    cardFormat: n.cardFormat === null || n.cardFormat.length === 0 ? [defaultCardFormat()] : n.cardFormat,
  };
}

export function createCloudNode(ctx: WriteContext): Created {
  const { draft, body, newId, now } = ctx;
  const id = newId();
  const b = pick(objectBody(body), NODE_WRITABLE);
  ctx.append(
    "cloudNodes",
    normalizeNode(parseBody(cloudNodeSchema, { ...b, id, created: new Date(now()).toISOString() }), draft.timezone),
  );
  return { status: 201, id };
}

export function updateCloudNode(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  const i = indexOf(ctx, "cloudNodes", params.cloudNodeId!, "cloud node");
  const current = draft.cloudNodes[i]!;
  const b = pick(objectBody(body), NODE_WRITABLE);
  requireKeys(b, ["name"]);
  // The threat level is set by its own route (TL1): a body's `threatLevel` is left out like the
  // node's other read-only fields, and the stored level is kept.
  const level = current.threatLevel;
  const next = normalizeNode(
    parseBody(cloudNodeSchema, {
      ...b,
      id: current.id,
      created: current.created,
      ...(level !== undefined ? { threatLevel: level } : {}),
    }),
    draft.timezone,
  );
  draft.cloudNodes[i] = next;
  return NO_CONTENT;
}

/**
 * Sets the node's threat level (docs/semantics.md TL1): `{level}`, an integer 0–255. Level 0 is
 * stored as no `threatLevel` at all, so that a node back at normal is the node it was before any
 * threat (a snapshot written before threat levels reads the same). The same level again changes
 * nothing: no change is stored and no event is sent.
 */
export function setThreatLevel(ctx: WriteContext): Created {
  const i = indexOf(ctx, "cloudNodes", ctx.params.cloudNodeId!, "cloud node");
  const b = objectBody(ctx.body);
  onlyKeys(b, ["level"]);
  const level = b.level;
  if (level === undefined) refuse(400, "required", ["body", "level"], "Is required: the threat level, 0 to 255.");
  if (typeof level !== "number" || !Number.isInteger(level) || level < 0 || level > THREAT_LEVEL_MAX)
    refuse(400, "invalid", ["body", "level"], `Must be a whole number from 0 (normal) to ${THREAT_LEVEL_MAX}.`);
  if ((ctx.base.cloudNodes[i]!.threatLevel ?? 0) === level) return NO_CONTENT;
  const node = ctx.draft.cloudNodes[i]!;
  if (level === 0) delete node.threatLevel;
  else node.threatLevel = level;
  return NO_CONTENT;
}

export function deleteCloudNode(ctx: WriteContext): Created {
  const i = indexOf(ctx, "cloudNodes", ctx.params.cloudNodeId!, "cloud node");
  refuseIfReferenced(cloudNodeReferrers(ctx.base, ctx.params.cloudNodeId!));
  ctx.remove("cloudNodes", i);
  return NO_CONTENT;
}

function connectionBody(
  b: Record<string, unknown>,
  id: string,
  cloudNode: string,
  keep: Record<string, unknown> = {},
): Record<string, unknown> {
  return { ...keep, ...connectionFields(b), id, cloudNode };
}

function nodeOf(ctx: WriteContext, id: string): CloudNode {
  return ctx.base.cloudNodes[indexOf(ctx, "cloudNodes", id, "cloud node")]!;
}

/** Position of a connection or device of the cloud node `nodeId`; 404 when it is not there. */
function onNode(ctx: WriteContext, c: "connections" | "devices", nodeId: string, id: string): number {
  const i = ctx.find(c, id);
  if (i < 0 || ctx.base[c][i]!.cloudNode !== nodeId)
    notFound(`${c === "devices" ? "device" : "connection"} on cloud node "${nodeId}"`, id);
  return i;
}

export function createConnection(ctx: WriteContext): Created {
  const node = nodeOf(ctx, ctx.params.cloudNodeId!);
  const id = ctx.newId();
  ctx.append("connections", parseConnectionBody(connectionSchema, connectionBody(objectBody(ctx.body), id, node.id)));
  return { status: 200, id };
}

export function updateConnection(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  nodeOf(ctx, params.cloudNodeId!);
  const i = onNode(ctx, "connections", params.cloudNodeId!, params.connectionId!);
  const c = draft.connections[i]!;
  const keep = { connected: c.connected, dhcp: c.dhcp, netmask: c.netmask, gateway: c.gateway, dns: c.dns };
  draft.connections[i] = parseConnectionBody(
    connectionSchema,
    connectionBody(objectBody(body), c.id, c.cloudNode, keep),
  );
  return NO_CONTENT;
}

export function deleteConnection(ctx: WriteContext): Created {
  const { params } = ctx;
  nodeOf(ctx, params.cloudNodeId!);
  const i = onNode(ctx, "connections", params.cloudNodeId!, params.connectionId!);
  refuseIfReferenced(connectionReferrers(ctx.base, params.connectionId!));
  ctx.remove("connections", i);
  return NO_CONTENT;
}

/** Configure network: stores `dhcp`/`netmask`/`gateway`/`dns`; only VENDOR_A controllers take it. */
export function configureConnection(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  nodeOf(ctx, params.cloudNodeId!);
  const c = draft.connections[onNode(ctx, "connections", params.cloudNodeId!, params.connectionId!)]!;
  configureNetwork(c, c.manufacturer, `"${c.id}"`, body);
  return NO_CONTENT;
}

const DEVICE_WRITABLE = [
  "name",
  "type",
  "publicIcon",
  "connection",
  "port",
  "primaryReader",
  "inputTypes",
  "osdpAddress",
  "wirelessAddress",
  "readerType",
  "readerSerialNumber",
  "supportBleCredentials",
  "securedReadsOnly",
  "delay",
  "dwell",
  "dps",
  "propAlarm",
  "propDelay",
  "rex",
  "forcedAlarm",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
];
const DEVICE_CREATE_REQUIRED = ["name", "type", "connection", "port"];
const DEVICE_UPDATE_REQUIRED = [
  ...DEVICE_CREATE_REQUIRED,
  "delay",
  "dwell",
  "dps",
  "rex",
  "autoOpenAfterFirstAllow",
  "authenticationPolicy",
];

function normalizeDevice(d: ReturnType<typeof deviceSchema.parse>): Device {
  return { ...d, partition: d.partition ?? [] };
}

export function createDevice(ctx: WriteContext): Created {
  const { params, body, newId, now } = ctx;
  const node = nodeOf(ctx, params.cloudNodeId!);
  const b = objectBody(body);
  requireKeys(b, DEVICE_CREATE_REQUIRED);
  const id = newId();
  const created = new Date(now()).toISOString().slice(0, 19).replace("T", " ");
  ctx.append(
    "devices",
    normalizeDevice(parseBody(deviceSchema, { ...pick(b, DEVICE_WRITABLE), id, cloudNode: node.id, created })),
  );
  return { status: 200, id };
}

export function updateDevice(ctx: WriteContext): Created {
  const { draft, params, body } = ctx;
  nodeOf(ctx, params.cloudNodeId!);
  const i = onNode(ctx, "devices", params.cloudNodeId!, params.deviceId!);
  const d = draft.devices[i]!;
  const b = objectBody(body);
  requireKeys(b, DEVICE_UPDATE_REQUIRED);
  const keep = {
    id: d.id,
    cloudNode: d.cloudNode,
    partition: d.partition,
    hardwareVersion: d.hardwareVersion,
    serialNumber: d.serialNumber,
    firmwareVersion: d.firmwareVersion,
    created: d.created,
  };
  draft.devices[i] = normalizeDevice(parseBody(deviceSchema, { ...pick(b, DEVICE_WRITABLE), ...keep }));
  return NO_CONTENT;
}

export function deleteDevice(ctx: WriteContext): Created {
  const { params } = ctx;
  nodeOf(ctx, params.cloudNodeId!);
  const i = onNode(ctx, "devices", params.cloudNodeId!, params.deviceId!);
  refuseIfReferenced(deviceReferrers(ctx.base, params.deviceId!));
  ctx.remove("devices", i);
  return NO_CONTENT;
}
