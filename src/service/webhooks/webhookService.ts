// The webhooks of `rsop serve --data`, one facade over three parts: the subscriptions kept in the
// store (subscriptionRegistry.ts), the outbox of events (outbox.ts) and the delivery loops
// (dispatcher.ts). Subscriptions are kept in the store, events put in the store's
// outbox (a write's in the write's own transaction, a decision's before the decision is answered),
// and one dispatcher loop per subscription that sends its events in outbox order, retrying with
// exponential backoff and jitter, and parks an event after its last attempt.
//
// Decisions never wait for a subscriber: recording an access event is one store transaction per
// request; delivery happens in the loops. The outbox is on disk, so a slow subscriber costs no
// memory (a loop holds one page of rows); its backlog of access events is capped, the oldest beyond
// the cap parked with reason `backlog` (docs/semantics.md W8).
//
// Notifications go only to addresses the destination policy allows (the transport's, HW1), and each
// carries its subscription's `sequence`, so a receiver can put an event that was parked and
// re-delivered back in its place (HW4).
//
// On a store shared by several replicas (PostgreSQL) every replica keeps the subscriptions in memory,
// re-read when any replica changes them (a notification) and before each subscription route, and
// stores the events of its own writes and decisions; only the replica elected dispatcher runs the
// loops' deliveries (W15–W18).
//
// One Webhooks serves every organization of the process (T42): the subscriptions of each, routed by
// scope (T43, T44). A server of one system or panel opens it with that one organization (`open`);
// the service with the registry's organizations (`openService`).
import { setMaxListeners } from "node:events";
import type { Decision, SystemSnapshot } from "../../model/index.js";
import type { AcceptedWrite } from "../store/durableSystem.js";
import type { OutboxEntry, WebhookStore } from "../store/webhookStore.js";
import type { DestinationPolicy, Subscription, SubscriptionFields } from "./subscription.js";
import type { WebhookTransport } from "./transport.js";
import type { Generation } from "../../events/topics.js";
import { WebhookDispatcher } from "./dispatcher.js";
import { type OrganizationEvent, type TenantOutbox, WebhookOutbox } from "./outbox.js";
import {
  type Owner,
  type WebhookContext,
  type WebhookScope,
  type WebhookScopes,
  SubscriptionRegistry,
  embeddedScopes,
} from "./subscriptionRegistry.js";

export type { WebhookContext, WebhookScope, WebhookScopes } from "./subscriptionRegistry.js";
export type { OrganizationEvent, TenantOutbox } from "./outbox.js";

/** The subscriptions of one organization made through the routes of one generation (T45). */
export interface OrganizationSubscriptions {
  readonly organization: string;
  readonly generation: Generation;
  /**
   * The node ids a node-array scope may name now: the organization's when its nodes are of this
   * generation, none otherwise; null for an organization without nodes (the root, a dealer).
   */
  nodeIds(): ReadonlySet<string> | null;
  /** Its subscriptions, by id. */
  list(): Subscription[];
  /** One of its subscriptions, or undefined (another organization's is unknown here). */
  get(id: string): Subscription | undefined;
  /** Creates a subscription; resolves to its id once it is stored. */
  create(fields: SubscriptionFields): Promise<string>;
  /** Replaces a subscription's fields; false when there is none with this id. */
  update(id: string, fields: SubscriptionFields): Promise<boolean>;
  /** Deletes a subscription and its undelivered events; false when there is none with this id. */
  remove(id: string): Promise<boolean>;
  /** A page of a subscription's parked events (each as the subscription may see it), or undefined for an unknown id. */
  parked(id: string, offset: number, limit: number): Promise<{ rows: unknown[]; total: number } | undefined>;
  /** Queues parked events again (all, or those with these event ids); undefined for an unknown subscription. */
  redeliver(id: string, eventIds: readonly string[] | null): Promise<number | undefined>;
}

/** Delivery settings. */
export interface WebhookOptions {
  /** Attempts per event before it is parked; default 8. */
  readonly attempts?: number;
  /** The delay after the first failed attempt (ms), doubled after each further one; default 1000. */
  readonly backoffMs?: number;
  /** The longest delay between two attempts (ms); default 300000 (5 minutes). */
  readonly maxBackoffMs?: number;
  /** Time limit of one attempt (ms); default 10000. */
  readonly timeoutMs?: number;
  /** Most access events waiting per subscription; the oldest beyond it are parked (reason `backlog`); default 10000. */
  readonly maxPendingAccess?: number;
  /** Clock (epoch ms); default Date.now. */
  readonly now?: () => number;
  /** Random numbers in [0, 1) for the jitter; default Math.random. */
  readonly random?: () => number;
  /** Told about parked events and store failures. */
  readonly log?: (line: string) => void;
  /**
   * Addresses (CIDRs, or single addresses) notifications may go to although they are refused by
   * default: loopback, link-local, private, shared, unique-local, unspecified, multicast (HW1).
   * Default none. A malformed entry throws a RangeError when the service opens. Read by whoever
   * builds the transport (`httpsTransport(allow)`), not by Webhooks itself.
   */
  readonly allow?: readonly string[];
}

/** Subscriptions, their outbox, and their dispatcher loops: the service's one handle on webhooks. */
export class Webhooks {
  readonly #store: WebhookStore;
  readonly #transport: WebhookTransport;
  readonly #log: (line: string) => void;
  readonly #closing = new AbortController();
  readonly #registry: SubscriptionRegistry;
  readonly #outbox: WebhookOutbox;
  readonly #dispatcher: WebhookDispatcher;
  /** The one organization of a server of one system or panel; undefined for the service. */
  readonly #embedded: WebhookContext | undefined;
  #stopWatching: (() => Promise<void>) | undefined;

  private constructor(
    store: WebhookStore,
    scopes: WebhookScopes,
    embedded: WebhookContext | undefined,
    o: WebhookOptions,
    transport: WebhookTransport,
  ) {
    this.#embedded = embedded;
    // Every attempt in flight listens to the closing signal: one per subscription delivering, which
    // in a service of many organizations is well beyond Node's default warning at 10.
    setMaxListeners(0, this.#closing.signal);
    this.#store = store;
    this.#transport = transport;
    const now = o.now ?? Date.now;
    const log = o.log ?? (() => undefined);
    this.#log = log;
    this.#dispatcher = new WebhookDispatcher(
      store,
      transport,
      {
        attempts: o.attempts ?? 8,
        backoff: o.backoffMs ?? 1000,
        maxBackoff: o.maxBackoffMs ?? 300_000,
        timeout: o.timeoutMs ?? 10_000,
        random: o.random ?? Math.random,
        now,
        log,
      },
      this.#closing.signal,
    );
    this.#registry = new SubscriptionRegistry(
      store,
      scopes,
      embedded !== undefined,
      now,
      this.#closing.signal,
      this.#dispatcher,
    );
    this.#dispatcher.registry = this.#registry;
    this.#outbox = new WebhookOutbox(store, this.#registry, now, o.maxPendingAccess ?? 10_000, log);
  }

  /** Where notifications may go (the subscription routes check a URL against it). */
  get destinations(): DestinationPolicy {
    return this.#transport.destinations;
  }

  /**
   * Loads the subscriptions of a store and starts their dispatcher loops, for a server of one system
   * or panel: every subscription is `ctx`'s organization's, as before organizations (T40).
   * @param transport - sends the notifications (adapters/delivery's `httpsTransport(options.allow)`).
   */
  static open(
    store: WebhookStore,
    ctx: WebhookContext,
    options: WebhookOptions,
    transport: WebhookTransport,
  ): Promise<Webhooks> {
    return Webhooks.#start(new Webhooks(store, embeddedScopes(ctx), ctx, options, transport));
  }

  /**
   * Loads the subscriptions of every organization and starts their dispatcher loops, for the
   * service (T42). Those stored without an organization are `scopes.embedded`'s.
   * @param transport - sends the notifications (adapters/delivery's `httpsTransport(options.allow)`).
   */
  static openService(
    store: WebhookStore,
    scopes: WebhookScopes,
    options: WebhookOptions,
    transport: WebhookTransport,
  ): Promise<Webhooks> {
    return Webhooks.#start(new Webhooks(store, scopes, undefined, options, transport));
  }

  static async #start(w: Webhooks): Promise<Webhooks> {
    const store = w.#store;
    const shared = store.shared;
    if (shared !== undefined) {
      w.#stopWatching = await shared.watch((what) => {
        if (what === "subscriptions")
          void w
            .refresh()
            .catch((e: unknown) =>
              w.#log(`webhooks: re-reading the subscriptions failed: ${(e as Error)?.message ?? String(e)}`),
            );
        else if (w.#dispatcher.dispatching) w.#dispatcher.wakeAll();
      });
    }
    await w.#registry.sync(true);
    if (shared !== undefined) await w.#dispatcher.elect(shared);
    return w;
  }

  /** Whether this process delivers the events (on a shared store, only the elected replica does). */
  get dispatching(): boolean {
    return this.#dispatcher.dispatching;
  }

  /**
   * Re-reads the subscriptions from a shared store, so that one created, changed or deleted through
   * another replica is served here too (the subscription routes call it first); nothing otherwise.
   */
  refresh(): Promise<void> {
    return this.#store.shared === undefined ? Promise.resolve() : this.#registry.sync(false);
  }

  /** The one organization of a server of one system or panel (opened by `open`). */
  #the(): WebhookContext {
    if (this.#embedded === undefined) throw new Error("the webhooks of the service have no one organization");
    return this.#embedded;
  }

  /** The generation of a server of one system or panel (its subscription routes'). */
  get generation(): Generation {
    return this.#the().generation;
  }
  /** The organization of a server of one system or panel. */
  get organizationId(): string {
    return this.#the().organizationId;
  }
  /** The node ids a scope may name now (a server of one system or panel). */
  nodeIds(): ReadonlySet<string> {
    return this.#the().nodeIds();
  }

  /** The one organization's subscriptions (a server of one system or panel), by id. */
  list(): Subscription[] {
    const ctx = this.#the();
    return this.subscriptionsOf(ctx.organizationId, ctx.generation).list();
  }

  /** One of the one organization's subscriptions, or undefined. */
  get(id: string): Subscription | undefined {
    const ctx = this.#the();
    return this.subscriptionsOf(ctx.organizationId, ctx.generation).get(id);
  }

  /** What the webhooks know of an organization; undefined for an unknown one. */
  scope(organization: string): WebhookScope | undefined {
    return this.#registry.scopes.organization(organization);
  }

  /** The subscriptions of an organization made through the routes of `generation` (T45). */
  subscriptionsOf(organization: string, generation: Generation): OrganizationSubscriptions {
    const owner: Owner = { organization, generation };
    const registry = this.#registry;
    const outbox = this.#outbox;
    return {
      organization,
      generation,
      nodeIds: () => {
        const scope = registry.scopes.organization(organization);
        if (scope === undefined || scope.generation === null) return null;
        return scope.generation === generation ? scope.nodeIds() : new Set();
      },
      list: () => registry.list(owner),
      get: (id) => registry.get(owner, id),
      create: (fields) => registry.create(owner, fields),
      update: (id, fields) => registry.update(owner, id, fields),
      remove: (id) => registry.remove(owner, id),
      parked: (id, offset, limit) => outbox.parked(owner, id, offset, limit),
      redeliver: (id, eventIds) => outbox.redeliver(owner, id, eventIds),
    };
  }

  /**
   * The outbox of a tenant (a system or panel) of organization `organization` (T43): its writes'
   * and decisions' events go to that organization's subscriptions and its ancestors' recursive ones.
   * @param key - the tenant's system id or serial number: a 1.0 panel's events are at that node
   *   (default: the organization's first node id).
   */
  forTenant(organization: string, key?: string): TenantOutbox {
    return this.#outbox.forTenant(organization, key);
  }

  /**
   * The outbox entries of events about organizations and panels (T44): the registry stores them in
   * its commit, then calls `stored(entries)`.
   */
  organizationEvents(events: readonly OrganizationEvent[]): OutboxEntry[] {
    return this.#outbox.organizationEvents(events);
  }

  /** The outbox entries of an accepted write of the one system or panel (for the store's `append`, in the write's transaction). */
  forWrite(write: AcceptedWrite): OutboxEntry[] {
    return this.#outbox.forWrite(this.#the().organizationId, undefined, write);
  }

  /** Wakes the loops of subscriptions that just got events. */
  stored(entries: readonly OutboxEntry[]): void {
    this.#outbox.stored(entries);
  }

  /** Whether any live subscription of the one organization wants access events. */
  wantsAccess(): boolean {
    return this.#outbox.wantsAccess(this.#the().organizationId);
  }

  /**
   * Stores the access events of the one system's answered decisions for the subscriptions that want
   * them, before the answer is sent (one transaction); the loops send them later.
   */
  recordDecisions(
    requests: readonly unknown[],
    decisions: readonly Decision[],
    snapshot: SystemSnapshot,
  ): Promise<void> {
    return this.#outbox.recordDecisions(this.#the().organizationId, requests, decisions, snapshot);
  }

  /** Stops every loop (an attempt in flight is cut off and stays pending). */
  async close(): Promise<void> {
    this.#closing.abort();
    this.#dispatcher.stopElection();
    await this.#registry.idle();
    await this.#dispatcher.stopLoops();
    // Deliveries made so far are committed before the store closes.
    await this.#dispatcher.flushPending();
    await this.#outbox.settled();
    // Ends the watching session, and with it this replica's claim to dispatch.
    await this.#stopWatching?.();
    this.#transport.drop();
  }
}
