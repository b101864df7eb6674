// Cloud nodes, connections and devices (seed 001 §4), with their create/update required fields,
// defaults, and deletes refused while something references them.
import { z } from "zod";
import { cloudNodeSchema, connectionSchema, defaultCardFormat, deviceSchema } from "../../model/index.js";
import type { CloudNode, Device } from "../../model/index.js";
import { connectionFields, objectBody, parseBody, parseConnectionBody, pick, requireKeys } from "../body.js";
import { notFound, refuse } from "../operation.js";
import { type Created, type Mutable, NO_CONTENT, type WriteContext, indexOf, removeAt } from "./common.js";
import { cloudNodeReferrers, connectionReferrers, deviceReferrers, refuseIfReferenced } from "./referrers.js";

const NODE_WRITABLE = ["name", "description", "serialNumber", "ecards", "offlinePolicy", "killTimer", "timezone", "locale", "cardFormat"];

/** A node as the snapshot loader normalizes it: the effective zone, and the default format when none is listed. */
function normalizeNode(n: ReturnType<typeof cloudNodeSchema.parse>, systemZone: string): CloudNode {
  return {
    ...n,
    timezone: n.timezone ?? systemZone,
    ecards: n.ecards ?? [],
    cardFormat: n.cardFormat === null || n.cardFormat.length === 0 ? [defaultCardFormat()] : n.cardFormat,
  };
}

export function createCloudNode({ draft, body, newId, now }: WriteContext): Created {
  const id = newId();
  const b = pick(objectBody(body), NODE_WRITABLE);
  draft.cloudNodes.push(normalizeNode(parseBody(cloudNodeSchema, { ...b, id, created: new Date(now()).toISOString() }), draft.timezone));
  return { status: 201, id };
}

export function updateCloudNode({ draft, params, body }: WriteContext): Created {
  const i = indexOf(draft.cloudNodes, params.cloudNodeId!, "cloud node");
  const current = draft.cloudNodes[i]!;
  const b = pick(objectBody(body), NODE_WRITABLE);
  requireKeys(b, ["name"]);
  const next = normalizeNode(parseBody(cloudNodeSchema, { ...b, id: current.id, created: current.created }), draft.timezone);
  draft.cloudNodes[i] = next;
  return NO_CONTENT;
}

export function deleteCloudNode({ draft, params }: WriteContext): Created {
  const i = indexOf(draft.cloudNodes, params.cloudNodeId!, "cloud node");
  refuseIfReferenced(cloudNodeReferrers(draft, params.cloudNodeId!));
  removeAt(draft.cloudNodes, i);
  return NO_CONTENT;
}

function connectionBody(b: Record<string, unknown>, id: string, cloudNode: string, keep: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...keep, ...connectionFields(b), id, cloudNode };
}

function nodeOf(draft: Mutable, id: string): CloudNode {
  return draft.cloudNodes[indexOf(draft.cloudNodes, id, "cloud node")]! as CloudNode;
}

function connectionIndex(draft: Mutable, nodeId: string, id: string): number {
  const i = draft.connections.findIndex((c) => c.id === id && c.cloudNode === nodeId);
  if (i < 0) notFound(`connection on cloud node "${nodeId}"`, id);
  return i;
}

export function createConnection({ draft, params, body, newId }: WriteContext): Created {
  const node = nodeOf(draft, params.cloudNodeId!);
  const id = newId();
  draft.connections.push(parseConnectionBody(connectionSchema, connectionBody(objectBody(body), id, node.id)));
  return { status: 200, id };
}

export function updateConnection({ draft, params, body }: WriteContext): Created {
  nodeOf(draft, params.cloudNodeId!);
  const i = connectionIndex(draft, params.cloudNodeId!, params.connectionId!);
  const c = draft.connections[i]!;
  const keep = { connected: c.connected, dhcp: c.dhcp, netmask: c.netmask, gateway: c.gateway, dns: c.dns };
  draft.connections[i] = parseConnectionBody(connectionSchema, connectionBody(objectBody(body), c.id, c.cloudNode, keep));
  return NO_CONTENT;
}

export function deleteConnection({ draft, params }: WriteContext): Created {
  nodeOf(draft, params.cloudNodeId!);
  const i = connectionIndex(draft, params.cloudNodeId!, params.connectionId!);
  refuseIfReferenced(connectionReferrers(draft, params.connectionId!));
  removeAt(draft.connections, i);
  return NO_CONTENT;
}

const NETWORK = z.object({
  dhcp: z.boolean(),
  netmask: z.string().nullable().optional(),
  gateway: z.string().nullable().optional(),
  dns: z.string().nullable().optional(),
});

/** Configure network: stores `dhcp`/`netmask`/`gateway`/`dns`; only VENDOR_A controllers take it. */
export function configureConnection({ draft, params, body }: WriteContext): Created {
  nodeOf(draft, params.cloudNodeId!);
  const c = draft.connections[connectionIndex(draft, params.cloudNodeId!, params.connectionId!)]!;
  if (c.manufacturer !== "VENDOR_A")
    refuse(409, "conflict", ["manufacturer"], `Connection "${c.id}" is ${c.manufacturer == null ? "of no known manufacturer" : `a ${c.manufacturer} controller`}; network configuration applies to VENDOR_A controllers only.`);
  const b = objectBody(body);
  requireKeys(b, ["dhcp"]);
  const parsed = parseBody(NETWORK, pick(b, ["dhcp", "netmask", "gateway", "dns"]));
  c.dhcp = parsed.dhcp;
  for (const k of ["netmask", "gateway", "dns"] as const) if (Object.hasOwn(b, k)) c[k] = parsed[k] ?? null;
  return NO_CONTENT;
}

const DEVICE_WRITABLE = [
  "name", "type", "publicIcon", "connection", "port", "primaryReader", "inputTypes", "osdpAddress", "wirelessAddress", "readerType",
  "readerSerialNumber", "supportBleCredentials", "securedReadsOnly", "delay", "dwell", "dps", "propAlarm", "propDelay", "rex",
  "forcedAlarm", "autoOpenAfterFirstAllow", "authenticationPolicy",
];
const DEVICE_CREATE_REQUIRED = ["name", "type", "connection", "port"];
const DEVICE_UPDATE_REQUIRED = [...DEVICE_CREATE_REQUIRED, "delay", "dwell", "dps", "rex", "autoOpenAfterFirstAllow", "authenticationPolicy"];

function deviceIndex(draft: Mutable, nodeId: string, id: string): number {
  const i = draft.devices.findIndex((d) => d.id === id && d.cloudNode === nodeId);
  if (i < 0) notFound(`device on cloud node "${nodeId}"`, id);
  return i;
}

function normalizeDevice(d: ReturnType<typeof deviceSchema.parse>): Device {
  return { ...d, partition: d.partition ?? [] };
}

export function createDevice({ draft, params, body, newId, now }: WriteContext): Created {
  const node = nodeOf(draft, params.cloudNodeId!);
  const b = objectBody(body);
  requireKeys(b, DEVICE_CREATE_REQUIRED);
  const id = newId();
  const created = new Date(now()).toISOString().slice(0, 19).replace("T", " ");
  draft.devices.push(normalizeDevice(parseBody(deviceSchema, { ...pick(b, DEVICE_WRITABLE), id, cloudNode: node.id, created })));
  return { status: 200, id };
}

export function updateDevice({ draft, params, body }: WriteContext): Created {
  nodeOf(draft, params.cloudNodeId!);
  const i = deviceIndex(draft, params.cloudNodeId!, params.deviceId!);
  const d = draft.devices[i]!;
  const b = objectBody(body);
  requireKeys(b, DEVICE_UPDATE_REQUIRED);
  const keep = { id: d.id, cloudNode: d.cloudNode, partition: d.partition, hardwareVersion: d.hardwareVersion, serialNumber: d.serialNumber, firmwareVersion: d.firmwareVersion, created: d.created };
  draft.devices[i] = normalizeDevice(parseBody(deviceSchema, { ...pick(b, DEVICE_WRITABLE), ...keep }));
  return NO_CONTENT;
}

export function deleteDevice({ draft, params }: WriteContext): Created {
  nodeOf(draft, params.cloudNodeId!);
  const i = deviceIndex(draft, params.cloudNodeId!, params.deviceId!);
  refuseIfReferenced(deviceReferrers(draft, params.deviceId!));
  removeAt(draft.devices, i);
  return NO_CONTENT;
}
