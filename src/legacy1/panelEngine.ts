// Architecture 1.0 panels evaluated directly: the panel is converted to 2.0 with its integer ids
// as strings, decided by the same engine, and answered in 1.0 terms — `door.request.*` topics,
// integer ids, and the 1.0 panel API RSOP shape (persons, doors, `HH:mm` times).
import { Engine } from "../evaluate/index.js";
import type { AtOptions } from "../evaluate/index.js";
import {
  type Decision,
  type Issue,
  QueryError,
  type Result,
  SnapshotError,
  err,
  ok,
  requestIssues,
} from "../model/index.js";
import { type LoadedPanel, panelKey, parsePanel } from "./parsePanel.js";

/** Topics of 1.0 panel events. */
export type PanelTopic = "door.request.allowed" | "door.request.denied" | "door.request.unknown";

/**
 * A decision about a scan at a 1.0 panel: a Decision with 1.0 topics and integer ids.
 */
export interface PanelDecision
  extends Omit<Decision, "topic" | "holderId" | "credentialId" | "activeRuleId" | "floors"> {
  topic: PanelTopic;
  holderId: number | null;
  credentialId: number | null;
  activeRuleId: number | null;
  floors: number[];
}

/** A person of a 1.0 RSOP result. */
export interface PanelRsopPerson {
  id: number;
  enabled: boolean;
  groups: { id: number; name: string }[];
  doors: {
    id: number;
    activeRuleId: number | null;
    allowed: boolean;
    name: string;
    created: string | null;
    type: string;
    publicIcon: string | null;
    readerType: string;
    securedReadsOnly: boolean;
    supportBleCredentials: boolean;
    readerSerialNumber: string | null;
  }[];
  rules: {
    id: number;
    type: "door" | "elevator";
    active: boolean;
    allow?: boolean;
    authenticationPolicy: string | null;
    startTime: string;
    stopTime: string;
    recurring: string[];
  }[];
  floorGroups: {
    id: number;
    activeRuleId: number | null;
    allowed: boolean;
    name: string;
    readerPort: { id: number; name: string; type: string };
    floors: { id: number; name: string; type: string }[];
  }[];
}

/**
 * A 1.0 RSOP result, in the 1.0 API's shape.
 */
export interface PanelRsopResult {
  date: string;
  persons: PanelRsopPerson[];
}

const TOPIC_1_0: Readonly<Record<string, PanelTopic>> = {
  allowed: "door.request.allowed",
  denied: "door.request.denied",
  unknown: "door.request.unknown",
};

function num(id: string | null): number | null {
  return id === null ? null : Number(id);
}

function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/**
 * A plain copy of a 1.0 request and its credential, each property read once; the request itself
 * when it is not an object or cannot be read (a throwing getter, a revoked Proxy: the engine then
 * answers badRequest, naming the field).
 */
function plainRequest(request: unknown): unknown {
  try {
    if (typeof request !== "object" || request === null || Array.isArray(request)) return request;
    const copy: Record<string, unknown> = { ...(request as Record<string, unknown>) };
    const c = copy.credential;
    if (typeof c === "object" && c !== null && !Array.isArray(c))
      copy.credential = { ...(c as Record<string, unknown>) };
    return copy;
  } catch {
    return request;
  }
}

/** A 1.0 request (from plainRequest) with its integer ids as the panel's 2.0 keys; a non-integer id becomes "" (badRequest). */
function toSystemRequest(request: unknown): unknown {
  if (typeof request !== "object" || request === null || Array.isArray(request)) return request;
  const r = request as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...r, deviceId: isId(r.deviceId) ? panelKey(r.deviceId) : "" };
  const c = r.credential as Record<string, unknown> | null | undefined;
  if (typeof c === "object" && c !== null && c.credentialId !== undefined)
    copy.credential = { ...c, credentialId: isId(c.credentialId) ? panelKey(c.credentialId) : "" };
  return copy;
}

/**
 * An engine over one architecture 1.0 panel: decisions with `door.request.*` topics and integer
 * ids, and RSOP in the 1.0 API's shape.
 * @example
 * const panel = loadPanelEngineOrThrow(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * panel.rsop([1], { at: "2026-04-15T14:15:00Z" }).persons[0].doors.length; //=> 10
 */
export class PanelEngine {
  readonly loaded: LoadedPanel;
  readonly engine: Engine;

  constructor(loaded: LoadedPanel) {
    this.loaded = loaded;
    this.engine = new Engine(loaded.system);
  }

  /**
   * Decides a scan at the panel. Device and mobile credential ids are 1.0 integers; the
   * answer carries 1.0 topics and integer ids. Never throws.
   */
  decide(request: unknown): PanelDecision {
    const plain = plainRequest(request);
    const d = this.engine.decide(plain === request ? request : toSystemRequest(plain));
    return {
      outcome: d.outcome,
      topic: TOPIC_1_0[d.outcome]!,
      reason: d.reason,
      holderId: num(d.holderId),
      credentialId: num(d.credentialId),
      activeRuleId: num(d.activeRuleId),
      duress: d.duress,
      floors: d.floors.map(Number),
      facilityCode: d.facilityCode,
      credentialNumber: d.credentialNumber,
    };
  }

  /**
   * Every problem of a 1.0 request (integer device and credential ids, then the checks of an AccessRequest), with paths.
   * @param request - parsed JSON of any shape.
   * @returns the problems, empty when the request is well formed.
   */
  requestIssues(request: unknown): Issue[] {
    const issues: Issue[] = [];
    const plain = plainRequest(request);
    if (plain === request) return requestIssues(request);
    {
      const r = plain as Record<string, unknown>;
      if (!isId(r.deviceId))
        issues.push({
          code: "invalid",
          path: ["deviceId"],
          message: "Must be a 1.0 device id: a non-negative integer.",
        });
      const c = r.credential as Record<string, unknown> | null | undefined;
      if (typeof c === "object" && c !== null && c.credentialId !== undefined && !isId(c.credentialId))
        issues.push({
          code: "invalid",
          path: ["credential", "credentialId"],
          message: "Must be a 1.0 credential id: a non-negative integer.",
        });
    }
    const idPaths = new Set(issues.map((i) => i.path.join(".")));
    for (const i of requestIssues(toSystemRequest(plain))) if (!idPaths.has(i.path.join("."))) issues.push(i);
    return issues;
  }

  /**
   * RSOP of persons at an instant in the 1.0 API's shape; `active` is evaluated in the panel's zone.
   * @throws QueryError naming every unknown person id or bad option.
   */
  rsop(personIds: readonly number[], options: AtOptions): PanelRsopResult {
    const issues: Issue[] = [];
    personIds.forEach((id, i) => {
      if (!isId(id) || !this.engine.compiled_.holderIndex_.has(panelKey(id)))
        issues.push({ code: "unknownId", path: ["ids", i], message: `Unknown person id "${String(id)}".` });
    });
    if (issues.length > 0) throw new QueryError(issues);
    const snap = this.loaded.system;
    const nodeId = snap.cloudNodes[0]!.id;
    const devices = new Map(snap.devices.map((d) => [d.id, d]));
    const r = this.engine.rsop(personIds.map(panelKey), { at: options.at, cloudNodeId: nodeId });
    return {
      date: r.date,
      persons: r.holders.map((h) => ({
        id: Number(h.id),
        enabled: h.enabled,
        groups: h.groups.map((g) => ({ id: Number(g.id), name: g.name })),
        doors: h.devices.map((d) => {
          const dev = devices.get(d.id)!;
          return {
            id: Number(d.id),
            activeRuleId: num(d.activeRuleId),
            allowed: d.allowed,
            name: d.name,
            created: d.created,
            type: d.type,
            publicIcon: d.publicIcon,
            readerType: d.readerType,
            securedReadsOnly: dev.securedReadsOnly,
            supportBleCredentials: dev.supportBleCredentials,
            readerSerialNumber: dev.readerSerialNumber,
          };
        }),
        rules: h.rules.map((x) => ({
          id: Number(x.id),
          type: x.type,
          active: x.active,
          ...(x.type === "door" ? { allow: x.allow } : {}),
          authenticationPolicy: x.authenticationPolicy,
          startTime: x.startTime.slice(0, 5),
          stopTime: x.stopTime.slice(0, 5),
          recurring: x.recurring,
        })),
        floorGroups: h.floorGroups.map((fg) => ({
          id: Number(fg.id),
          activeRuleId: num(fg.activeRuleId),
          allowed: fg.allowed,
          name: fg.name,
          readerPort: {
            id: Number(fg.readerPort.id),
            name: fg.readerPort.name,
            type: devices.get(fg.readerPort.id)!.type,
          },
          floors: fg.floors.map((f) => ({ id: Number(f.id), name: f.name, type: f.type })),
        })),
      })),
    };
  }
}

/**
 * Validates an `rsop-panel/1` snapshot and compiles it into a PanelEngine.
 * @param input - parsed JSON of any shape.
 * @returns the engine, or every problem at its panel path.
 * @example
 * const r = loadPanelEngine(JSON.parse(readFileSync("examples/panel.json", "utf8")));
 * r.ok && r.value.decide({ deviceId: 999, at: 0, pin: "1" }).topic; //=> "door.request.denied"
 */
export function loadPanelEngine(input: unknown): Result<PanelEngine> {
  const r = parsePanel(input);
  return r.ok ? ok(new PanelEngine(r.value)) : err(r.issues);
}

/**
 * Like loadPanelEngine, but throws a SnapshotError carrying every problem.
 * @param input - parsed JSON of any shape.
 * @returns the engine.
 * @throws SnapshotError when the panel has any problem.
 * @example
 * loadPanelEngineOrThrow(JSON.parse(readFileSync("examples/panel.json", "utf8"))).loaded.panel.serialNumber; //=> "PNL-0042-ANNEX"
 */
export function loadPanelEngineOrThrow(input: unknown): PanelEngine {
  const r = loadPanelEngine(input);
  if (!r.ok) throw new SnapshotError(r.issues, "panel");
  return r.value;
}
