// The status of a system's cloud nodes on the service (semantics N1–N19): node tokens, heartbeats,
// the revision each node acknowledged, its last failure and its hardware report, and what the
// service answers from them (`connectionStatus`, `syncStatus`, the hardware list). What must outlive
// the process or be seen by another one is kept in registry records (tokens, acknowledgement,
// failure, hardware, declared interval, and the heartbeat time at most every 30 s); the exact time
// of the last heartbeat and the `transfer` flag live in memory.
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { HttpError } from "../httpError.js";
import type { RegistryChange, TenantRow } from "../store/registryStore.js";
import type { TenantRegistry } from "../tenants/registry.js";
import { nodeEventsKind } from "./nodeEvents.js";

/** The record kinds of cloud nodes. */
export const NODE_KIND = { token: "node-token", status: "node-status" } as const;

/** A node token (record id = SHA-256 hex of the token): the token itself is shown once, never stored (N2). */
export interface NodeTokenRecord {
  readonly systemId: string;
  readonly cloudNodeId: string;
  readonly created: string;
}

/** A node's failure to apply a revision, as it reported it (N9). */
export interface NodeFailure {
  readonly revision: number;
  readonly message: string;
}

/** What is kept of a node's reports (record id = `${systemId}|${cloudNodeId}`). */
export interface NodeStatusRecord {
  readonly systemId: string;
  readonly cloudNodeId: string;
  /** The revision the node last acknowledged and since when (ISO 8601), or null. */
  readonly acknowledged: { readonly revision: number; readonly at: string } | null;
  readonly failure: NodeFailure | null;
  /** The hardware items of its last report (null: none yet) and when they were reported. */
  readonly hardware: readonly HardwareItem[] | null;
  readonly hardwareAt: string | null;
  /** The wireless diagnostics of its last report that had them (null: none yet; absent in older records). */
  readonly wireless?: readonly WirelessItem[] | null;
  readonly intervalSeconds: number;
  /** The last heartbeat as stored: at most 30 s older than the real one (N6). */
  readonly heartbeatAt: string | null;
}

/** Heartbeat interval bounds and default, in seconds (N5). */
export const INTERVAL = { min: 1, max: 300, default: 5 } as const;
/** A node is connected while its heartbeats arrive within this many intervals (N7). */
export const MISSED_INTERVALS = 3;
/** The stored heartbeat time is rewritten at most this often (ms) when nothing else changed (N6). */
export const HEARTBEAT_WRITE_MS = 30_000;
/** Most hardware items one heartbeat may report (N4). */
export const MAX_HARDWARE_ITEMS = 1000;

const STATUS_TIMESTAMP = z.object({ timestamp: z.string().nullable() });
const DATA_FLOW = z.enum(["Pending", "Started", "BlockedByOfflineNode", "BlockedByFailure"]);

/** `connectionStatus` as answered (N7). */
export const CONNECTION_STATUS = z.object({ connected: z.boolean(), details: STATUS_TIMESTAMP });
/** `syncStatus` as answered (N8): `dataFlowStatus` only when not synced. */
export const SYNC_STATUS = z.object({
  synced: z.boolean(),
  details: z.object({ timestamp: z.string().nullable(), dataFlowStatus: DATA_FLOW.optional() }),
});

const bool = z.boolean().nullable().optional();
const str = z.string().max(1000).nullable().optional();
const int = z.number().int().nullable().optional();

/** One hardware item a node reports: the known fields with their types, unknown ones null; no other key (N4). */
export const HARDWARE_ITEM = z.strictObject({
  id: z.string().min(1).max(200),
  type: z.enum(["lockhub", "ethernet", "usb", "wirelessCoordinator", "wirelessGateway"]),
  connection: z
    .strictObject({ id: z.string().max(200), name: z.string().max(1000).nullable(), type: z.string().max(100) })
    .nullable()
    .optional(),
  wirelessAddress: str,
  firmwareVersion: str,
  hardwareVersion: str,
  serialNumber: str,
  connectionStatus: CONNECTION_STATUS.nullable().optional(),
  radioTimeout: bool,
  overcurrent: bool,
  undervoltage: bool,
  lowPowerMode: bool,
  inputPowerOn: bool,
  peripheralPowerOn: bool,
  unstableConnection: bool,
  batteryChargeCategory: str,
  batteryHealth: str,
  bootloaderVersion: str,
  startupVersion: str,
  batteryLevel: int,
  batteryTime: int,
  batteryCurrent: int,
  inputVoltage: int,
  inputCurrent: int,
  peripheralCurrent: int,
  peripheralVoltage: int,
  recentComlosses: z.array(z.unknown()).max(1000).nullable().optional(),
  syncStatus: SYNC_STATUS.nullable().optional(),
  transactions: z.array(z.unknown()).max(1000).nullable().optional(),
});
export type HardwareItem = z.infer<typeof HARDWARE_ITEM>;

const num = z.number().nullable().optional();

/** One wireless network a node reports (N27): the seed's diagnostics fields, unknown ones null; no other key. */
export const WIRELESS_ITEM = z.strictObject({
  id: z.string().min(1).max(200),
  name: str,
  type: str,
  nodes: z
    .array(
      z.strictObject({
        name: str,
        shortAddress: str,
        address: str,
        communicationLost: bool,
        averageRtt: num,
        averageRetries: num,
        failureRate: num,
      }),
    )
    .max(1000),
  links: z.array(z.strictObject({ from: z.string().max(200), to: z.string().max(200), lqi: num })).max(10_000),
});
export type WirelessItem = z.infer<typeof WIRELESS_ITEM>;

/** The body of a heartbeat (N3). */
export const HEARTBEAT_BODY = z.strictObject({
  revision: z.number().int().min(0),
  intervalSeconds: z.number().int().min(INTERVAL.min).max(INTERVAL.max).optional(),
  transfer: z.boolean().optional(),
  failure: z
    .strictObject({ revision: z.number().int().min(0), message: z.string().max(2000) })
    .nullable()
    .optional(),
  hardware: z.array(HARDWARE_ITEM).max(MAX_HARDWARE_ITEMS).optional(),
  wireless: z.array(WIRELESS_ITEM).max(100).optional(),
});
export type Heartbeat = z.infer<typeof HEARTBEAT_BODY>;

/** What statusOf needs of one node. */
export interface NodeState {
  /** The last heartbeat (ms since the epoch), or null: never. */
  readonly lastHeartbeat: number | null;
  /** How much older than the real last heartbeat `lastHeartbeat` may be (ms): 0 when this process received it. */
  readonly heartbeatSlackMs: number;
  readonly intervalSeconds: number;
  /** The last heartbeat said a transfer of changes was under way. */
  readonly transfer: boolean;
  readonly acknowledged: { readonly revision: number; readonly at: number } | null;
  readonly failure: NodeFailure | null;
}

export type ConnectionStatus = z.infer<typeof CONNECTION_STATUS>;
export type SyncStatus = z.infer<typeof SYNC_STATUS>;
export interface CloudNodeStatus {
  readonly connectionStatus: ConnectionStatus;
  readonly syncStatus: SyncStatus;
}

/** A node that never reported. */
export const NEVER_REPORTED: NodeState = {
  lastHeartbeat: null,
  heartbeatSlackMs: 0,
  intervalSeconds: INTERVAL.default,
  transfer: false,
  acknowledged: null,
  failure: null,
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * A node's answered status (N7, N8). Connected while its last heartbeat is within 3 of its intervals
 * (plus the slack of a stored time). Synced when its acknowledged revision is the system's, even
 * offline. Otherwise, in this order: not connected → BlockedByOfflineNode; a failure reported for a
 * revision after the acknowledged one → BlockedByFailure; a transfer under way → Started; else Pending.
 */
export function statusOf(node: NodeState, systemRevision: number, now: number): CloudNodeStatus {
  const last = node.lastHeartbeat;
  const connected =
    last !== null && now - last <= MISSED_INTERVALS * node.intervalSeconds * 1000 + node.heartbeatSlackMs;
  const connectionStatus = { connected, details: { timestamp: iso(last) } };
  const ack = node.acknowledged;
  const timestamp = iso(ack?.at ?? null);
  if (ack !== null && ack.revision === systemRevision)
    return { connectionStatus, syncStatus: { synced: true, details: { timestamp } } };
  const failed = node.failure !== null && node.failure.revision > (ack?.revision ?? -1);
  const dataFlowStatus = !connected
    ? "BlockedByOfflineNode"
    : failed
      ? "BlockedByFailure"
      : node.transfer
        ? "Started"
        : "Pending";
  return { connectionStatus, syncStatus: { synced: false, details: { timestamp, dataFlowStatus } } };
}

/** SHA-256 hex of a token: the id of its record. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

const statusId = (systemId: string, cloudNodeId: string) => `${systemId}|${cloudNodeId}`;

/**
 * The deletions of every record kept about a system's cloud nodes (N2): their tokens, their status
 * and the ids of their uploaded events. Committed with the system's deletion (the registry's
 * `recordsOfTenant`), so a system id imported again later finds none of them.
 */
export function nodeRecordsOf(tenant: TenantRow, registry: TenantRegistry): RegistryChange[] {
  if (tenant.kind !== "system") return [];
  const key = tenant.key;
  const out: RegistryChange[] = [];
  for (const r of registry.records(NODE_KIND.token))
    if ((r.value as NodeTokenRecord).systemId === key)
      out.push({ op: "deleteRecord", kind: NODE_KIND.token, id: r.id });
  for (const r of registry.records(NODE_KIND.status))
    if (r.id.startsWith(`${key}|`)) out.push({ op: "deleteRecord", kind: NODE_KIND.status, id: r.id });
  const events = nodeEventsKind(key);
  for (const r of registry.records(events)) out.push({ op: "deleteRecord", kind: events, id: r.id });
  return out;
}
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** In memory per node: the exact last heartbeat and its `transfer` flag. */
interface Live {
  readonly at: number;
  readonly transfer: boolean;
}

/** The cloud nodes' status of one service (every system's). */
export class NodeStatus {
  readonly #registry: TenantRegistry;
  readonly #now: () => number;
  readonly #live = new Map<string, Live>();

  constructor(registry: TenantRegistry, now: () => number = Date.now) {
    this.#registry = registry;
    this.#now = now;
  }

  /** A new token of the node (32 random bytes, base64url), shown once; the node's earlier tokens stop working (N2). */
  createToken(systemId: string, cloudNodeId: string): Promise<string> {
    const token = randomBytes(32).toString("base64url");
    const value: NodeTokenRecord = { systemId, cloudNodeId, created: new Date(this.#now()).toISOString() };
    return this.#registry.updateRecords(() => {
      const earlier = [...this.#registry.records(NODE_KIND.token)].filter((r) => {
        const v = r.value as NodeTokenRecord;
        return v.systemId === systemId && v.cloudNodeId === cloudNodeId;
      });
      const changes: RegistryChange[] = [
        ...earlier.map((r) => ({ op: "deleteRecord" as const, kind: NODE_KIND.token, id: r.id })),
        { op: "putRecord", kind: NODE_KIND.token, id: tokenDigest(token), value },
      ];
      return { changes, result: token };
    });
  }

  /** The node a token stands for, or undefined. */
  tokenNode(token: string): NodeTokenRecord | undefined {
    return this.#registry.record(NODE_KIND.token, tokenDigest(token))?.value as NodeTokenRecord | undefined;
  }

  #stored(systemId: string, cloudNodeId: string): NodeStatusRecord | undefined {
    return this.#registry.record(NODE_KIND.status, statusId(systemId, cloudNodeId))?.value as
      | NodeStatusRecord
      | undefined;
  }

  /** Records a heartbeat (N3–N6): its revision is the acknowledgement; absent fields leave what was reported. */
  async heartbeat(systemId: string, cloudNodeId: string, beat: Heartbeat): Promise<void> {
    const now = this.#now();
    const key = statusId(systemId, cloudNodeId);
    this.#live.set(key, { at: now, transfer: beat.transfer === true });
    await this.#registry.updateRecords(() => {
      const was = this.#stored(systemId, cloudNodeId);
      const at = new Date(now).toISOString();
      const acknowledged =
        was?.acknowledged?.revision === beat.revision ? was.acknowledged : { revision: beat.revision, at };
      const hardwareChanged = beat.hardware !== undefined && !sameJson(beat.hardware, was?.hardware ?? null);
      const next: NodeStatusRecord = {
        systemId,
        cloudNodeId,
        acknowledged,
        failure: beat.failure === undefined ? (was?.failure ?? null) : beat.failure,
        hardware: hardwareChanged ? beat.hardware! : (was?.hardware ?? null),
        hardwareAt: hardwareChanged ? at : (was?.hardwareAt ?? null),
        wireless: beat.wireless ?? was?.wireless ?? null,
        intervalSeconds: beat.intervalSeconds ?? was?.intervalSeconds ?? INTERVAL.default,
        heartbeatAt: was?.heartbeatAt ?? null,
      };
      const stale = next.heartbeatAt === null || now - Date.parse(next.heartbeatAt) >= HEARTBEAT_WRITE_MS;
      const changed = was === undefined || !sameJson({ ...next, heartbeatAt: null }, { ...was, heartbeatAt: null });
      if (!changed && !stale) return { changes: [], result: undefined };
      const value = { ...next, heartbeatAt: at };
      return { changes: [{ op: "putRecord", kind: NODE_KIND.status, id: key, value }], result: undefined };
    });
  }

  /** What statusOf needs of a node: this process's heartbeat if it received one, else the stored one. */
  stateOf(systemId: string, cloudNodeId: string): NodeState {
    const stored = this.#stored(systemId, cloudNodeId);
    if (stored === undefined) return NEVER_REPORTED;
    const live = this.#live.get(statusId(systemId, cloudNodeId));
    const storedAt = stored.heartbeatAt === null ? null : Date.parse(stored.heartbeatAt);
    const fresh = live !== undefined && (storedAt === null || live.at >= storedAt);
    return {
      lastHeartbeat: fresh ? live.at : storedAt,
      heartbeatSlackMs: fresh ? 0 : HEARTBEAT_WRITE_MS,
      intervalSeconds: stored.intervalSeconds,
      transfer: fresh ? live.transfer : false,
      acknowledged:
        stored.acknowledged === null
          ? null
          : { revision: stored.acknowledged.revision, at: Date.parse(stored.acknowledged.at) },
      failure: stored.failure,
    };
  }

  /** The answered status of a node at the system's revision, now. */
  status(systemId: string, cloudNodeId: string, systemRevision: number): CloudNodeStatus {
    return statusOf(this.stateOf(systemId, cloudNodeId), systemRevision, this.#now());
  }

  /** The node's last reported hardware items. @throws HttpError 503 before its first report (N10). */
  hardware(systemId: string, cloudNodeId: string): readonly HardwareItem[] {
    const items = this.#stored(systemId, cloudNodeId)?.hardware ?? null;
    if (items === null)
      throw new HttpError(503, `Cloud node "${cloudNodeId}" has not reported its hardware yet.`, [
        { path: "cloud_node_id", message: `Cloud node "${cloudNodeId}" has not reported yet.` },
      ]);
    return items;
  }

  /** The node's last reported wireless diagnostics. @throws HttpError 503 before its first report (N27). */
  wireless(systemId: string, cloudNodeId: string): readonly WirelessItem[] {
    const items = this.#stored(systemId, cloudNodeId)?.wireless ?? null;
    if (items === null)
      throw new HttpError(503, `Cloud node "${cloudNodeId}" has not reported its wireless diagnostics yet.`, [
        { path: "cloud_node_id", message: `Cloud node "${cloudNodeId}" has not reported wireless diagnostics yet.` },
      ]);
    return items;
  }
}

/** What a system's app answers of its cloud nodes on the service (N10, N11): their status and hardware. */
export interface CloudNodeAnswers {
  status(cloudNodeId: string): CloudNodeStatus;
  /** @throws HttpError 503 before the node's first hardware report. */
  hardware(cloudNodeId: string): readonly HardwareItem[];
  /** @throws HttpError 503 before the node's first wireless report. */
  wireless(cloudNodeId: string): readonly WirelessItem[];
}
