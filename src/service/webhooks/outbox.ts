// The webhook outbox, as the service fills and reads it: a write's events are stored in the write's
// own transaction (the store's `append` takes `forWrite`'s entries), a decision's access events
// before the decision is answered (group commit: one transaction per turn of the event loop). A
// subscription's backlog of access events is capped, the oldest beyond the cap parked with reason
// `backlog` (docs/semantics.md W8). Parked events are listed and queued again here too.
//
// Routing by scope (T43): an event of a tenant (a system's or a panel's) goes to its organization's
// subscriptions of the tenant's generation (own or recursive scope, or a node array naming the
// node), and to each ancestor's with the recursive scope. An event about an organization or a panel
// goes the same way from its parent; an update or deletion of an organization also to its own
// subscriptions (T44). Each reaches only subscriptions of its topic's generation.
import type { Decision, SystemSnapshot } from "../../model/index.js";
import type { AcceptedWrite } from "../store/durableSystem.js";
import { type OutboxEntry, type WebhookStore, eventIdOf } from "../store/webhookStore.js";
import { accessEvent } from "../../events/accessEvent.js";
import { changeEvents, threatLevelEvents } from "../../events/changeEvents.js";
import { filterEvent } from "../../events/filterEvent.js";
import { type Generation, THREAT_LEVEL_TOPIC } from "../../events/topics.js";
import type { WebhookEvent } from "../../events/types.js";
import {
  type Owner,
  SCOPE_WORDS,
  type SubscriptionEntry,
  type SubscriptionRegistry,
  type WebhookScope,
  matchesTopic,
} from "./subscriptionRegistry.js";

/**
 * An event about an organization or a registered panel, as the registry of organizations makes it
 * (events/orgEvents.ts `OrgEvent`): what routes it, and its body (T44).
 */
export interface OrganizationEvent {
  /** The generation of its topic: it reaches only that generation's subscriptions. */
  readonly generation: Generation;
  readonly about: "organization" | "panel" | "permission";
  readonly kind: "created" | "updated" | "deleted" | "accepted";
  /** The organization it is about (a panel's: the panel's organization). */
  readonly organization: string;
  /** That organization's ancestors, root first, when the event happened. */
  readonly ancestors: readonly string[];
  /** The body as sent: its `id` names the organization or the panel (its serial number), its `eventId` the event. */
  readonly body: OutboxEntry["event"];
}

/** The outbox of one tenant's events, for its durable system and its decision routes. */
export interface TenantOutbox {
  forWrite(write: AcceptedWrite): OutboxEntry[];
  stored(entries: readonly OutboxEntry[]): void;
  recordDecisions(
    requests: readonly unknown[],
    decisions: readonly Decision[],
    snapshot: SystemSnapshot,
  ): Promise<void>;
  wantsAccess(): boolean;
}

/** A subscription an event at an organization may reach: the organization's own, or an ancestor's recursive one. */
interface Candidate {
  readonly e: SubscriptionEntry;
  readonly own: boolean;
}

/** Whether a candidate wants an event of `topic` at node `node` (an ancestor's takes every node's). */
function reaches(c: Candidate, topic: string, node: string | null): boolean {
  return c.own ? matchesTopic(c.e.sub, topic, node) : c.e.sub.events.includes(topic);
}

const isChangeTopic = (t: string) => t.startsWith("entity.");
/** The topics of a write: its entity events, and a node's threat level change (TL1). */
const isWriteTopic = (t: string) => isChangeTopic(t) || t === THREAT_LEVEL_TOPIC;
const isAccessTopic = (t: string) => t.startsWith("device.request.") || t.startsWith("door.request.");
const isDecisionTopic = (t: string) => t.startsWith("device.request.");

/** The events of writes and decisions, stored for the subscriptions that want them. */
export class WebhookOutbox {
  readonly #store: WebhookStore;
  readonly #registry: SubscriptionRegistry;
  readonly #now: () => number;
  readonly #cap: number;
  readonly #log: (line: string) => void;
  /** Access events of decisions waiting for one batched commit (see recordDecisions). */
  #decided: OutboxEntry[] = [];
  #decidedFlush: Promise<void> | null = null;

  constructor(
    store: WebhookStore,
    registry: SubscriptionRegistry,
    now: () => number,
    cap: number,
    log: (line: string) => void,
  ) {
    this.#store = store;
    this.#registry = registry;
    this.#now = now;
    this.#cap = cap;
    this.#log = log;
  }

  /** A page of a subscription's parked events (each as the subscription may see it), or undefined for an unknown id. */
  async parked(
    owner: Owner,
    id: string,
    offset: number,
    limit: number,
  ): Promise<{ rows: unknown[]; total: number } | undefined> {
    const e = this.#registry.ownedEntry(owner, id);
    if (e === undefined) return undefined;
    const { rows, total } = await this.#store.parked(id, offset, limit);
    return {
      total,
      rows: rows.map((r) => ({
        id: eventIdOf(r.event),
        topic: r.event.topic,
        occurredAt: r.event.occurredAt,
        sequence: r.sequence,
        reason: r.reason,
        attempts: r.attempts,
        lastError: r.lastError,
        parkedAt: r.parkedAt,
        event: filterEvent(r.event as unknown as WebhookEvent, e.sub.secrecyLevel),
      })),
    };
  }

  /** Queues parked events again (all, or those with these event ids); undefined for an unknown subscription. */
  async redeliver(owner: Owner, id: string, eventIds: readonly string[] | null): Promise<number | undefined> {
    const e = this.#registry.ownedEntry(owner, id);
    if (e === undefined) return undefined;
    const n = await this.#store.redeliver(id, eventIds);
    // Re-delivered access events wait again and count toward the backlog cap.
    if (n > 0) e.pendingAccess = (await this.#store.pendingCounts()).get(id)?.access ?? 0;
    e.wake();
    return n;
  }

  /**
   * The live subscriptions of `generation` that an event at organization `at` may reach, wanting a
   * topic that passes `wants`: the organization's own (any scope) and the recursive ones of its
   * ancestors (`above`, default the scopes') (T43).
   */
  #candidates(
    at: string,
    generation: Generation,
    wants: (topic: string) => boolean,
    above: readonly string[] = this.#registry.scopes.organization(at)?.ancestors ?? [],
  ): Candidate[] {
    const registry = this.#registry;
    const out: Candidate[] = [];
    const add = (organization: string, own: boolean) => {
      for (const e of registry.entriesOf(organization))
        if (
          e.generation === generation &&
          (own || e.sub.scope === SCOPE_WORDS[generation].recursive) &&
          registry.live(e.sub) &&
          e.sub.events.some(wants)
        )
          out.push({ e, own });
    };
    add(at, true);
    for (const a of above) add(a, false);
    return out;
  }

  /** The scope of organization `at` when it has a tenant's events (a generation), else null. */
  #tenantScope(at: string): (WebhookScope & { readonly generation: Generation }) | null {
    const scope = this.#registry.scopes.organization(at);
    return scope === undefined || scope.generation === null ? null : { ...scope, generation: scope.generation };
  }

  /**
   * The outbox of a tenant of organization `organization`: `key` is its system id or serial number
   * (a 1.0 panel's events are at that node; default the organization's first node id).
   */
  forTenant(organization: string, key?: string): TenantOutbox {
    return {
      forWrite: (write) => this.forWrite(organization, key, write),
      stored: (entries) => this.stored(entries),
      recordDecisions: (requests, decisions, snapshot) =>
        this.recordDecisions(organization, requests, decisions, snapshot),
      wantsAccess: () => this.wantsAccess(organization),
    };
  }

  /** The outbox entries of an accepted write (for the store's `append`, in the write's transaction). */
  forWrite(organization: string, key: string | undefined, write: AcceptedWrite): OutboxEntry[] {
    const scope = this.#tenantScope(organization);
    if (scope === null) return [];
    const wanting = this.#candidates(organization, scope.generation, isWriteTopic, scope.ancestors);
    if (wanting.length === 0) return [];
    // 1.0 counts entity events among the panel's events: a node array naming the panel takes them.
    const node = scope.generation === "1.0" ? (key ?? [...scope.nodeIds()][0] ?? null) : null;
    const out: OutboxEntry[] = [];
    const input = {
      before: write.before,
      after: write.after,
      patches: write.patches,
      inversePatches: write.inversePatches,
      occurredAt: write.time,
    };
    for (const event of changeEvents(input))
      for (const c of wanting)
        if (reaches(c, event.topic, node)) out.push({ subscriptionId: c.e.sub.id, kind: "change", event });
    // A threat level is a cloud-node event (TL1): a node array naming the node takes it. Only
    // looked for when someone wants it (it compares the write's nodes).
    if (scope.generation === "2.0" && wanting.some((c) => c.e.sub.events.includes(THREAT_LEVEL_TOPIC)))
      for (const event of threatLevelEvents(input))
        for (const c of wanting)
          if (reaches(c, event.topic, event.cloudNodeId))
            out.push({ subscriptionId: c.e.sub.id, kind: "change", event });
    return out;
  }

  /**
   * The outbox entries of events about organizations and panels (the registry stores them in its
   * commit, then calls `stored`), each for subscriptions of its generation (T44): an organization's
   * from its parent up, and its update or deletion to its own subscriptions too; a panel's from its
   * organization up (a node array naming the panel takes none: its topics are organization events).
   */
  organizationEvents(events: readonly OrganizationEvent[]): OutboxEntry[] {
    const registry = this.#registry;
    const out: OutboxEntry[] = [];
    const add = (subscriptionId: string, event: OutboxEntry["event"]) =>
      out.push({ subscriptionId, kind: "change", event });
    for (const ev of events) {
      const { generation, body } = ev;
      const wants = (t: string) => t === body.topic;
      // A panel's and a permission's events are about something in the organization: they start there.
      const panel = ev.about !== "organization";
      // An organization's event starts at its parent (the last ancestor; none for the root).
      const at = panel ? ev.organization : ev.ancestors[ev.ancestors.length - 1];
      if (at !== undefined) {
        const above = panel ? ev.ancestors : ev.ancestors.slice(0, -1);
        for (const c of this.#candidates(at, generation, wants, above))
          if (reaches(c, body.topic, null)) add(c.e.sub.id, body);
      }
      if (panel || ev.kind === "created") continue;
      for (const e of registry.entriesOf(ev.organization))
        if (e.generation === generation && registry.live(e.sub) && matchesTopic(e.sub, body.topic, null))
          add(e.sub.id, body);
    }
    return out;
  }

  /** Wakes the loops of subscriptions that just got events. */
  stored(entries: readonly OutboxEntry[]): void {
    // Access events stored by another commit (a node's upload, N25) count against the backlog cap (W8) as the service's own do.
    const access = entries.filter((x) => x.kind === "access");
    if (access.length > 0) void this.#capAccess(access);
    for (const id of new Set(entries.filter((x) => x.kind !== "access").map((x) => x.subscriptionId)))
      this.#registry.entry(id)?.wake();
  }

  /** Whether any subscription that events of this organization's tenant reach wants access events. */
  wantsAccess(organization: string): boolean {
    const scope = this.#tenantScope(organization);
    return (
      scope !== null && this.#candidates(organization, scope.generation, isAccessTopic, scope.ancestors).length > 0
    );
  }

  /**
   * Stores the access events of answered decisions for the subscriptions that want them, before the
   * answer is sent (one transaction); the loops send them later.
   */
  async recordDecisions(
    organization: string,
    requests: readonly unknown[],
    decisions: readonly Decision[],
    snapshot: SystemSnapshot,
  ): Promise<void> {
    const scope = this.#tenantScope(organization);
    if (scope === null) return;
    const wanting = this.#candidates(organization, scope.generation, isDecisionTopic, scope.ancestors);
    if (wanting.length === 0) return;
    const now = this.#now();
    let added = 0;
    decisions.forEach((d, i) => {
      const subs = wanting.filter((c) => c.e.sub.events.includes(d.topic));
      if (subs.length === 0) return;
      const event = accessEvent(d, requests[i], snapshot, { now });
      for (const c of subs)
        if (reaches(c, event.topic, event.cloudNode?.id ?? null)) {
          this.#decided.push({ subscriptionId: c.e.sub.id, kind: "access", event });
          added++;
        }
    });
    if (added === 0) return;
    // Group commit: the decisions answered in the same turn of the event loop share one transaction
    // (one fsync), and each answer waits for it.
    this.#decidedFlush ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flushDecided());
    await this.#decidedFlush;
  }

  async #flushDecided(): Promise<void> {
    const out = this.#decided;
    this.#decided = [];
    this.#decidedFlush = null;
    await this.#store.enqueue(out);
    await this.#capAccess(out);
  }

  /** Counts stored access events per subscription, parks the oldest beyond the cap (W8), and wakes the senders. */
  async #capAccess(out: readonly OutboxEntry[]): Promise<void> {
    const time = new Date(this.#now()).toISOString();
    const counts = new Map<string, number>();
    for (const x of out) counts.set(x.subscriptionId, (counts.get(x.subscriptionId) ?? 0) + 1);
    for (const [id, n] of counts) {
      const e = this.#registry.entry(id);
      if (e === undefined) continue;
      e.pendingAccess += n;
      if (e.pendingAccess > this.#cap) {
        try {
          const parked = await this.#store.parkOldest(id, "access", this.#cap, time);
          e.pendingAccess -= parked;
          if (parked > 0)
            this.#log(
              `webhook ${id}: ${parked} access event${parked === 1 ? "" : "s"} parked: more than ${this.#cap} were waiting`,
            );
        } catch (err) {
          // The events are stored; only the cap waits for the next decisions.
          this.#log(`webhook ${id}: parking the oldest access events failed: ${(err as Error).message}`);
        }
      }
      e.wake();
    }
  }

  /** Resolves once the decisions' events being stored are (failures are the decisions' to report). */
  async settled(): Promise<void> {
    if (this.#decidedFlush !== null) await this.#decidedFlush.catch(() => undefined);
  }
}
