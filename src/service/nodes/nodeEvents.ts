// The access events a cloud node uploads (semantics N20–N29): the decisions it made at its doors,
// in the order it made them, each with the node's own event id. Each becomes the access event the
// service makes of its own decisions (events/accessEvent.ts, the one function: the same shape), and
// goes to the subscriptions that want it (the routing of webhooks/outbox.ts), with the window of ids
// already received, in ONE registry commit: the dedupe window and the outbox rows are stored together
// or not at all, so a re-sent upload (a lost answer, a node killed before it emptied its queue)
// never makes a second notification, and an answered upload is never lost (N22, N23).
import { z } from "zod";
import { accessEvent } from "../../events/accessEvent.js";
import type { AccessEvent } from "../../events/types.js";
import {
  type Decision,
  type Reason,
  REASONS,
  type SystemSnapshot,
  formatPath,
  outcomeOf,
  requestIssues,
} from "../../model/index.js";
import { HttpError, MAX_ISSUES } from "../httpError.js";
import type { RecordRow, RegistryChange } from "../store/registryStore.js";
import type { OutboxEntry } from "../store/webhookStore.js";
import { StaleRecord, type TenantRegistry } from "../tenants/registry.js";
import { SCOPE_WORDS, isLive, matchesTopic } from "../webhooks/subscriptionRegistry.js";
import type { Webhooks } from "../webhooks/webhookService.js";

/** Most events one upload may carry (N21). */
export const MAX_NODE_EVENTS = 1000;
/** Most bytes of one upload's body (N21). */
export const MAX_NODE_EVENT_BYTES = 1024 * 1024;
/**
 * The dedupe window of each node (N24): the ids of its last uploads, at least this many ids (a whole
 * upload is kept or dropped, so up to one upload more), none older than `days`.
 */
export const DEDUPE_WINDOW = { ids: 5000, days: 30 } as const;

/** The record kind of a system's received event ids: one record per accepted upload (N24). */
export const nodeEventsKind = (systemId: string) => `node-events|${systemId}`;

/** A record of one accepted upload: its node, its number among the node's, when, and its event ids. */
export interface NodeEventBatch {
  readonly cloudNodeId: string;
  readonly n: number;
  readonly at: string;
  readonly ids: readonly string[];
}

const OUTCOMES = ["allowed", "denied", "unknown"] as const;

/** A decision as the engine answers it (model/decision.ts); outcome, topic and reason agree (decisionIssues). */
export const NODE_DECISION = z.object({
  outcome: z.enum(OUTCOMES),
  topic: z.enum(OUTCOMES.map((o) => `device.request.${o}` as const)),
  reason: z.enum(REASONS as [Reason, ...Reason[]]),
  holderId: z.string().nullable(),
  credentialId: z.string().nullable(),
  activeRuleId: z.string().nullable(),
  duress: z.boolean(),
  floors: z.array(z.string()),
  facilityCode: z.number().int().nullable(),
  // A card number past 2^53−1 is its decimal string (CN1, CN3).
  credentialNumber: z
    .union([
      z.number().int(),
      z
        .string()
        .regex(/^(0|[1-9][0-9]*)$/)
        .max(155),
    ])
    .nullable(),
});

/**
 * The problems of a decision whose reason or topic is not of its outcome. Checked beside the schema:
 * a zod refinement does not run once another event of the body has a problem.
 */
function decisionIssues(d: unknown): Found[] {
  const { outcome, topic, reason } = (typeof d === "object" && d !== null ? d : {}) as Record<string, unknown>;
  if (typeof outcome !== "string" || !(OUTCOMES as readonly string[]).includes(outcome)) return [];
  const out: Found[] = [];
  if (
    typeof reason === "string" &&
    (REASONS as readonly string[]).includes(reason) &&
    outcomeOf(reason as Reason) !== outcome
  )
    out.push({ path: ["reason"], message: `Reason "${reason}" is not a reason of an ${outcome} decision.` });
  if (typeof topic === "string" && topic !== `device.request.${outcome}`)
    out.push({ path: ["topic"], message: `The topic of an ${outcome} decision is device.request.${outcome}.` });
  return out;
}

/** One event of an upload. */
export const NODE_EVENT = z.object({
  eventId: z.uuid().describe("The node's id of the event (a UUID); the service skips an id it already received"),
  occurredAt: z.iso.datetime({ offset: true }).describe("When the node decided (ISO 8601)"),
  request: z.looseObject({}).describe("The access request as the node decided it (POST /{system_id}/decisions)"),
  decision: NODE_DECISION.describe("The engine's decision"),
});

/** The body of an upload. */
export const NODE_EVENTS_BODY = z.object({ events: z.array(NODE_EVENT).max(MAX_NODE_EVENTS) });

/** The answer of an upload (N22). */
export const NODE_EVENTS_ANSWER = z.object({
  accepted: z.number().int().describe("Events stored now (their notifications are on their way)"),
  duplicates: z.number().int().describe("Events skipped: their id was received before"),
});

export type NodeEventInput = z.infer<typeof NODE_EVENT>;

/** A problem of an upload, at its path inside the body. */
interface Found {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * The events of a body, or a 413 (more than MAX_NODE_EVENTS) or 400 listing every problem at
 * `body.events[i].…` (at most MAX_ISSUES). A request is checked as the decide route checks it,
 * except under a `badRequest` decision, whose request is malformed by definition (N21).
 */
export function parseNodeEvents(body: unknown): NodeEventInput[] {
  const events = (body as { events?: unknown } | null)?.events;
  if (Array.isArray(events) && events.length > MAX_NODE_EVENTS)
    throw new HttpError(413, `Too many events in one upload: at most ${MAX_NODE_EVENTS}, got ${events.length}.`, [
      {
        path: "body.events",
        message: `An upload holds at most ${MAX_NODE_EVENTS} events; send the rest in further uploads.`,
      },
    ]);
  const parsed = NODE_EVENTS_BODY.safeParse(body);
  const issues: Found[] = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({ path: i.path as (string | number)[], message: i.message }));
  if (Array.isArray(events))
    events.forEach((e: unknown, i) => {
      const request = (e as { request?: unknown } | null)?.request;
      const decision = (e as { decision?: { reason?: unknown } } | null)?.decision;
      for (const found of decisionIssues(decision))
        issues.push({ ...found, path: ["events", i, "decision", ...found.path] });
      const reason = decision?.reason;
      if (typeof request !== "object" || request === null || reason === "badRequest") return;
      for (const found of requestIssues(request))
        issues.push({ ...found, path: ["events", i, "request", ...found.path] });
    });
  if (issues.length === 0 && parsed.success) return parsed.data.events;
  const listed = issues
    .slice(0, MAX_ISSUES)
    .map((i) => ({ path: formatPath(["body", ...i.path]), message: i.message }));
  throw new HttpError(
    400,
    issues.length > MAX_ISSUES
      ? `Invalid events. ${issues.length} problems; the first ${MAX_ISSUES} are listed.`
      : "Invalid events.",
    listed,
  );
}

/** The access event of a node's decision: the service's own (accessEvent), at the node that decided it (N20). */
export function nodeAccessEvent(e: NodeEventInput, snapshot: SystemSnapshot, cloudNodeId: string): AccessEvent {
  const deviceId = (e.request as { deviceId?: unknown }).deviceId;
  // accessEvent reads the request's deviceId and `at` only: `at` is the instant the node reports.
  const event = accessEvent(e.decision as Decision, { deviceId, at: e.occurredAt }, snapshot, {
    id: e.eventId.toLowerCase(),
  });
  // The node that decided is the one uploading, even for a device since moved or deleted (N20).
  if (event.cloudNode?.id === cloudNodeId) return event;
  const name = snapshot.cloudNodes.find((n) => n.id === cloudNodeId)?.name ?? null;
  return { ...event, cloudNode: { id: cloudNodeId, name } };
}

/**
 * The outbox entries of access events of a system of `organization`, routed as the service's own
 * decisions' are (webhooks/outbox.ts recordDecisions): the organization's live subscriptions of its
 * generation wanting the topic (a node array naming the event's node), and its ancestors' recursive
 * ones (N25). In event order, so each subscription gets them in upload order.
 */
export function accessEntries(
  webhooks: Webhooks | undefined,
  organization: string,
  events: readonly AccessEvent[],
  now: () => number,
): OutboxEntry[] {
  const scope = webhooks?.scope(organization);
  if (webhooks === undefined || scope === undefined || scope.generation === null) return [];
  const generation = scope.generation;
  const recursive = SCOPE_WORDS[generation].recursive;
  const own = webhooks.subscriptionsOf(organization, generation).list();
  const above = scope.ancestors.flatMap((a) =>
    webhooks
      .subscriptionsOf(a, generation)
      .list()
      .filter((s) => s.scope === recursive),
  );
  const live = (s: (typeof own)[number]) => isLive(s, now);
  const out: OutboxEntry[] = [];
  for (const event of events) {
    const node = event.cloudNode?.id ?? null;
    for (const s of own)
      if (live(s) && matchesTopic(s, event.topic, node)) out.push({ subscriptionId: s.id, kind: "access", event });
    for (const s of above)
      if (live(s) && s.events.includes(event.topic)) out.push({ subscriptionId: s.id, kind: "access", event });
  }
  return out;
}

/** The ids of a stored batch, as a set made once per record row. */
const idSets = new WeakMap<RecordRow, ReadonlySet<string>>();
function idsOf(row: RecordRow): ReadonlySet<string> {
  let ids = idSets.get(row);
  if (ids === undefined) {
    ids = new Set((row.value as NodeEventBatch).ids);
    idSets.set(row, ids);
  }
  return ids;
}

/** What an upload came to. */
export interface NodeEventsResult {
  readonly accepted: number;
  readonly duplicates: number;
}

/** Where an upload goes: the system (its organization, its snapshot) and the node. */
export interface NodeEventsTarget {
  readonly organization: string;
  readonly systemId: string;
  readonly cloudNodeId: string;
  readonly snapshot: SystemSnapshot;
}

/** The node events of the service: dedupe, store, route (N20–N29). */
export class NodeEvents {
  readonly #registry: TenantRegistry;
  readonly #webhooks: () => Webhooks | undefined;
  readonly #now: () => number;

  constructor(registry: TenantRegistry, webhooks: () => Webhooks | undefined, now: () => number = Date.now) {
    this.#registry = registry;
    this.#webhooks = webhooks;
    this.#now = now;
  }

  /**
   * Stores the events not received before, in order, with their outbox rows and their ids in one
   * commit; resolves once durable (N22, N23). Another process taking the same batch number first
   * (a shared store): read again and retried, at most three times, then 503.
   */
  async record(t: NodeEventsTarget, events: readonly NodeEventInput[]): Promise<NodeEventsResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await this.#registry.updateRecords(() => this.#build(t, events));
      } catch (e) {
        if (!(e instanceof StaleRecord)) throw e;
      }
    }
    throw new HttpError(503, "The events could not be stored now; send them again.");
  }

  /** The commit of one upload: the new batch, the batches beyond the window, the outbox rows. */
  #build(t: NodeEventsTarget, events: readonly NodeEventInput[]) {
    const kind = nodeEventsKind(t.systemId);
    const rows = [...this.#registry.records(kind)];
    const fresh: NodeEventInput[] = [];
    const taken = new Set<string>();
    for (const e of events) {
      const id = e.eventId.toLowerCase();
      if (taken.has(id) || rows.some((r) => idsOf(r).has(id))) continue;
      taken.add(id);
      fresh.push(e);
    }
    const result = { accepted: fresh.length, duplicates: events.length - fresh.length };
    if (fresh.length === 0) return { changes: [] as RegistryChange[], result };
    const now = this.#now();
    const mine = rows
      .filter((r) => (r.value as NodeEventBatch).cloudNodeId === t.cloudNodeId)
      .sort((a, b) => (b.value as NodeEventBatch).n - (a.value as NodeEventBatch).n);
    const n = ((mine[0]?.value as NodeEventBatch | undefined)?.n ?? 0) + 1;
    const batch: NodeEventBatch = { cloudNodeId: t.cloudNodeId, n, at: new Date(now).toISOString(), ids: [...taken] };
    const changes: RegistryChange[] = [
      // ifVersion 0: another process storing this node's batch n first refuses this commit (N26).
      { op: "putRecord", kind, id: `${t.cloudNodeId}|${n}`, value: batch, ifVersion: 0 },
      ...beyondWindow(rows, mine, taken.size, now).map((r) => ({ op: "deleteRecord" as const, kind, id: r.id })),
    ];
    const accessEvents = fresh.map((e) => nodeAccessEvent(e, t.snapshot, t.cloudNodeId));
    const entries = accessEntries(this.#webhooks(), t.organization, accessEvents, this.#now);
    return { changes, outbox: entries, result };
  }
}

/**
 * The batches that leave the window (N24): of the node's own (newest first), those after the newest
 * that already hold DEDUPE_WINDOW.ids with the new one's `size`; of every node of the system, those
 * older than DEDUPE_WINDOW.days.
 */
function beyondWindow(rows: readonly RecordRow[], mine: readonly RecordRow[], size: number, now: number): RecordRow[] {
  const out = new Set<RecordRow>();
  let kept = size;
  for (const r of mine) {
    if (kept >= DEDUPE_WINDOW.ids) out.add(r);
    else kept += (r.value as NodeEventBatch).ids.length;
  }
  const oldest = now - DEDUPE_WINDOW.days * 86_400_000;
  for (const r of rows) if (Date.parse((r.value as NodeEventBatch).at) < oldest) out.add(r);
  return [...out];
}
