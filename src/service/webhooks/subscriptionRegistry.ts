// The webhook subscriptions of a running service, of every organization: kept in the store, held in
// memory (one entry per subscription, with its owner and the state of its delivery loop, indexed by
// organization), changed one at a time. On a store shared by several replicas the registry is re-read
// when any replica changes it (W15–W18). The loops themselves are the dispatcher's (dispatcher.ts):
// the registry tells it when one starts or stops.
import type { SubscriptionOwner, WebhookStore } from "../store/webhookStore.js";
import type { Generation } from "../../events/topics.js";
import type { Subscription, SubscriptionFields } from "./subscription.js";

/** What a server of one system or panel serves webhooks for: one organization (embedded). */
export interface WebhookContext {
  readonly generation: Generation;
  readonly organizationId: string;
  /** The node ids a scope may name (2.0: the system's cloud-node ids; 1.0: the panel's serial number). */
  readonly nodeIds: () => ReadonlySet<string>;
}

/** What the webhooks need to know of one organization (T42). */
export interface WebhookScope {
  /**
   * The generation of its tenants' events and node ids: 2.0 for a system's organization, 1.0 for a
   * panel's; null for an organization without nodes (the root, a dealer).
   */
  readonly generation: Generation | null;
  /** The node ids a scope may name: its system's cloud-node ids (2.0), its panels' serial numbers (1.0). */
  readonly nodeIds: () => ReadonlySet<string>;
  /** Its ancestors, root first (`[]` for the root and for the one organization of an embedded server). */
  readonly ancestors: readonly string[];
}

/** The organizations whose subscriptions the webhooks serve (the service's registry, or one fixed organization). */
export interface WebhookScopes {
  /** An organization, or undefined when there is none with this id. */
  organization(id: string): WebhookScope | undefined;
  /** The organization of the subscriptions stored without one (made by a server of one system or panel, T40). */
  readonly embedded?: string | undefined;
}

/** The scopes of an embedded server: its one organization, with nothing above it. */
export function embeddedScopes(ctx: WebhookContext): WebhookScopes {
  const scope: WebhookScope = { generation: ctx.generation, nodeIds: ctx.nodeIds, ancestors: [] };
  return { organization: (id) => (id === ctx.organizationId ? scope : undefined), embedded: ctx.organizationId };
}

/** Whose a subscription is, as the service holds it: the organization's id (never "") and the generation. */
export interface Owner {
  readonly organization: string;
  readonly generation: Generation;
}

/** The scope word of a generation's subscriptions on their own organization, and the recursive one. */
export const SCOPE_WORDS: Readonly<Record<Generation, { readonly own: string; readonly recursive: string }>> = {
  "2.0": { own: "this", recursive: "recursive" },
  "1.0": { own: "ou", recursive: "ouRecursive" },
};

/** A subscription as the service holds it: its fields, its owner and the state of its delivery loop. */
export interface SubscriptionEntry extends Owner {
  sub: Subscription;
  /** Rows delivered whose removal from the outbox is not yet committed. */
  readonly done: Set<number>;
  /** Pending access events (for the backlog cap). */
  pendingAccess: number;
  wake: () => void;
  /** Waits `ms`, or less when woken. */
  readonly pause: (ms: number) => Promise<void>;
  stopped: boolean;
  loop: Promise<void>;
}

/** The delivery loops, as the registry starts and stops them. */
export interface SubscriptionLoops {
  /** A new entry for `sub` of `owner`, its loop not yet running. */
  create(sub: Subscription, owner: Owner, pendingAccess: number): SubscriptionEntry;
  /** Starts the loop of an entry the registry holds. */
  run(entry: SubscriptionEntry): void;
  /** Stops the loop of an entry the registry no longer holds. */
  stop(id: string, entry: SubscriptionEntry): void;
}

/** The fields stored for a subscription (its odometer is kept by the store). */
export function storedFields(sub: Subscription): Omit<Subscription, "odometer"> {
  const { odometer: _odometer, ...fields } = sub;
  return fields;
}

/** Whether `expiresAt` is reached (an active subscription then becomes inactive). */
export function isExpired(sub: Subscription, now: () => number): boolean {
  return sub.active && sub.expiresAt !== null && Date.parse(sub.expiresAt) <= now();
}

/** Active and not expired: it gets events. */
export function isLive(sub: Subscription, now: () => number): boolean {
  return sub.active && !isExpired(sub, now);
}

/** Whether the subscription wants an event of `topic` from node `nodeId`. */
export function matchesTopic(sub: Subscription, topic: string, nodeId: string | null): boolean {
  if (!sub.events.includes(topic)) return false;
  return typeof sub.scope === "string" || (nodeId !== null && sub.scope.includes(nodeId));
}

/** The subscriptions: in the store and in memory, changed and re-read one at a time. */
export class SubscriptionRegistry {
  readonly #store: WebhookStore;
  readonly #scopes: WebhookScopes;
  /** A server of one organization stores its subscriptions without an owner, as before organizations (T40). */
  readonly #embedded: boolean;
  readonly #now: () => number;
  readonly #closing: AbortSignal;
  readonly #loops: SubscriptionLoops;
  readonly #subs = new Map<string, SubscriptionEntry>();
  /** The entries of each organization, by id: events are routed to a few organizations among thousands. */
  readonly #byOrganization = new Map<string, Map<string, SubscriptionEntry>>();
  /** Subscription changes and re-reads, one at a time (a re-read never undoes a change made meanwhile). */
  #serial: Promise<unknown> = Promise.resolve();

  constructor(
    store: WebhookStore,
    scopes: WebhookScopes,
    embedded: boolean,
    now: () => number,
    closing: AbortSignal,
    loops: SubscriptionLoops,
  ) {
    this.#store = store;
    this.#scopes = scopes;
    this.#embedded = embedded;
    this.#now = now;
    this.#closing = closing;
    this.#loops = loops;
  }

  get scopes(): WebhookScopes {
    return this.#scopes;
  }

  /** Every entry, in creation order. */
  entries(): IterableIterator<SubscriptionEntry> {
    return this.#subs.values();
  }

  entry(id: string): SubscriptionEntry | undefined {
    return this.#subs.get(id);
  }

  /** The entries of an organization (every generation). */
  entriesOf(organization: string): Iterable<SubscriptionEntry> {
    return this.#byOrganization.get(organization)?.values() ?? [];
  }

  /** Resolves once the changes and re-reads queued so far are done. */
  idle(): Promise<unknown> {
    return this.#serial;
  }

  /** Runs subscription changes and re-reads one at a time. */
  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#serial.then(task);
    this.#serial = run.catch(() => undefined);
    return run;
  }

  /** The owner of a stored row: "" is the embedded organization, and its generation (T40). */
  #ownerOf(stored: SubscriptionOwner): Owner {
    const organization = stored.organization === "" ? (this.#scopes.embedded ?? "") : stored.organization;
    const generation =
      stored.generation === "2.0" || stored.generation === "1.0"
        ? stored.generation
        : (this.#scopes.organization(organization)?.generation ?? "2.0");
    return { organization, generation };
  }

  /** Makes the loops match the stored subscriptions (and, with `counts`, the waiting access events). */
  sync(counts: boolean): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#closing.aborted) return;
      const waiting = counts ? await this.#store.pendingCounts() : undefined;
      const stored = await this.#store.subscriptions();
      const seen = new Set<string>();
      for (const s of stored) {
        seen.add(s.id);
        const fields = s.fields as Omit<Subscription, "odometer">;
        const e = this.#subs.get(s.id);
        if (e === undefined)
          this.#start({ ...fields, odometer: s.odometer }, this.#ownerOf(s), waiting?.get(s.id)?.access ?? 0);
        else {
          // The odometer only grows: the dispatcher's own count may be ahead of its batched commit.
          e.sub = { ...fields, odometer: Math.max(e.sub.odometer, s.odometer) };
          if (waiting !== undefined) e.pendingAccess = waiting.get(s.id)?.access ?? 0;
          e.wake();
        }
      }
      for (const [id, e] of this.#subs) if (!seen.has(id)) this.#stop(id, e);
    });
  }

  #start(sub: Subscription, owner: Owner, pendingAccess: number): void {
    const entry = this.#loops.create(sub, owner, pendingAccess);
    this.#subs.set(sub.id, entry);
    let of = this.#byOrganization.get(owner.organization);
    if (of === undefined) this.#byOrganization.set(owner.organization, (of = new Map()));
    of.set(sub.id, entry);
    this.#loops.run(entry);
  }

  #stop(id: string, e: SubscriptionEntry): void {
    this.#subs.delete(id);
    const of = this.#byOrganization.get(e.organization);
    of?.delete(id);
    if (of?.size === 0) this.#byOrganization.delete(e.organization);
    this.#loops.stop(id, e);
  }

  /** The subscriptions of an organization made through the routes of `generation`, by id. */
  list(owner: Owner): Subscription[] {
    return [...this.entriesOf(owner.organization)]
      .filter((e) => e.generation === owner.generation)
      .map((e) => this.current(e))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** One subscription of `owner`, or undefined (another organization's is unknown here). */
  get(owner: Owner, id: string): Subscription | undefined {
    const e = this.#owned(owner, id);
    return e === undefined ? undefined : this.current(e);
  }

  /** The entry of a subscription when `owner` owns it. */
  #owned(owner: Owner, id: string): SubscriptionEntry | undefined {
    const e = this.#subs.get(id);
    return e !== undefined && e.organization === owner.organization && e.generation === owner.generation
      ? e
      : undefined;
  }

  /** The entry of `id` when `owner` owns it (the outbox's parked events and redelivery). */
  ownedEntry(owner: Owner, id: string): SubscriptionEntry | undefined {
    return this.#owned(owner, id);
  }

  /** Creates a subscription of `owner`; resolves to its id once it is stored. */
  create(owner: Owner, fields: SubscriptionFields): Promise<string> {
    return this.#exclusive(async () => {
      const id = crypto.randomUUID();
      const sub: Subscription = { id, ...fields, userId: null, odometer: 0 };
      await this.#store.putSubscription(
        id,
        storedFields(sub),
        this.#embedded ? { organization: "", generation: "" } : owner,
      );
      this.#start(sub, owner, 0);
      return id;
    });
  }

  /** Replaces a subscription's fields; false when `owner` has none with this id. */
  update(owner: Owner, id: string, fields: SubscriptionFields): Promise<boolean> {
    return this.#exclusive(async () => {
      const e = this.#owned(owner, id);
      if (e === undefined) return false;
      const sub: Subscription = { ...e.sub, ...fields };
      await this.#store.putSubscription(id, storedFields(sub));
      e.sub = sub;
      e.wake();
      return true;
    });
  }

  /** Deletes a subscription and its undelivered events; false when `owner` has none with this id. */
  remove(owner: Owner, id: string): Promise<boolean> {
    return this.#exclusive(async () => {
      const e = this.#owned(owner, id);
      if (e === undefined) return false;
      await this.#store.deleteSubscription(id);
      this.#stop(id, e);
      return true;
    });
  }

  /** The subscription as served: `active` false once `expiresAt` is reached. */
  current(e: SubscriptionEntry): Subscription {
    return this.expired(e.sub) ? { ...e.sub, active: false } : e.sub;
  }

  expired(sub: Subscription): boolean {
    return isExpired(sub, this.#now);
  }

  live(sub: Subscription): boolean {
    return isLive(sub, this.#now);
  }
}
