// The tenants of a service database in memory (T30–T35): each tenant's live system and report service
// are loaded when a request first needs them and evicted, least recently used first, when the loaded
// tenants' estimated heap passes the memory budget (memoryBudget.ts).
//
// A tenant is unloaded → loading → loaded → evicting → unloaded. Loading is single-flight: every
// `acquire` of a tenant being loaded waits for the one load. An `acquire` of a tenant being evicted
// waits for the eviction and loads it again. A lease keeps its tenant loaded until it is released;
// so do a write in flight, a report being generated and the `pinned` predicate. Evicting is
// `durable.close()`: it waits for the writes in flight and stores a snapshot when changes came since
// the last, so a reload replays little; the store view it closes releases nothing (the space's close
// does). The estimate is checked after each load, each durable write and each release; a lone tenant
// larger than the budget still loads (never refused), with one log line.
import { ReportService, type ReportStoreLimits } from "../reportService.js";
import { type DurableSystem, type DurableSystemOptions, openDurableSystem } from "../store/durableSystem.js";
import type { Store, StoreSpace } from "../store/store.js";
import { defaultMemoryBudget, estimateBytes, jsonCharsInTurns, patchChars } from "./memoryBudget.js";
import { type SystemSummary, sameSummary, systemSummary, touchesCloudNodes } from "./tenantSummary.js";

/** A loaded tenant, held until `release()` (which may be called more than once). */
export interface Lease {
  readonly n: number;
  readonly durable: DurableSystem;
  readonly reports: ReportService;
  release(): void;
}

export interface TenantHostOptions {
  /** The estimated heap the loaded tenants are kept under (T31); default half of V8's heap limit. */
  readonly memoryBudgetBytes?: number;
  /** The webhook outbox of tenant n's writes (DurableSystemOptions.outbox); default none. */
  readonly outboxFor?: (n: number) => DurableSystemOptions["outbox"] | undefined;
  readonly snapshotEvery?: number;
  /** Clock of the live systems and reports; default Date.now. */
  readonly now?: () => number;
  /** Caps of each tenant's stored reports (RP16, RP17). */
  readonly reportStore?: ReportStoreLimits;
  readonly maxReportEntries?: number;
  /** Indentation of report answers; default 2. */
  readonly indent?: number;
  /** Tenants never evicted (a migration's, a staged system, the embedded default); default none. */
  readonly pinned?: (n: number) => boolean;
  /** Told a system tenant's cloud-node summary at each load and when a durable write changed it (T34). */
  readonly onSummary?: (n: number, summary: SystemSummary) => void;
  /** Told once a tenant is evicted (a cache of its apps can drop them). */
  readonly onEvicted?: (n: number) => void;
  readonly log?: (line: string) => void;
  /**
   * Opens a tenant's system from its (watched) store view; default openDurableSystem. A shared space
   * gives a replica here (openReplicatedSystem over the view, which is then its SharedStore).
   */
  readonly open?: (store: Store, options: DurableSystemOptions) => Promise<DurableSystem>;
}

/** What `/healthz` shows of the host. */
export interface TenantHostStats {
  readonly loaded: number;
  readonly loads: number;
  readonly evictions: number;
  readonly estimatedBytes: number;
  readonly budgetBytes: number;
}

/** A tenant the host knows of: loading, loaded or being evicted. */
interface Entry {
  readonly n: number;
  state: "loading" | "loaded" | "evicting";
  /** Settles once the load has (the entry is then loaded, or gone). */
  ready: Promise<void>;
  /** Settles once the eviction has (the entry is then gone). */
  gone?: Promise<void>;
  durable?: DurableSystem;
  reports?: ReportService;
  /** Leases held, and acquires waiting for the load (they hold one each already). */
  leases: number;
  /** Appends not yet answered by the store. */
  writes: number;
  /** When it was last acquired or released (the host's own counter: least recently used first). */
  lastUsed: number;
  /** JSON characters of its last counted snapshot, and of the patches written since. */
  chars: number;
  patchChars: number;
  /** Its estimate, counted in the host's total while loaded. */
  bytes: number;
  summary?: SystemSummary;
}

const message = (e: unknown) => (e as Error)?.message ?? String(e);

/** The tenants of one StoreSpace, loaded on demand and evicted under the memory budget. */
export class TenantHost {
  readonly #space: StoreSpace;
  readonly #options: TenantHostOptions;
  readonly #budget: number;
  readonly #entries = new Map<number, Entry>();
  readonly #log: (line: string) => void;
  #bytes = 0;
  #clock = 0;
  #loads = 0;
  #evictions = 0;
  #closing: Promise<void> | undefined;

  constructor(space: StoreSpace, options: TenantHostOptions = {}) {
    const budget = options.memoryBudgetBytes ?? defaultMemoryBudget();
    if (!Number.isSafeInteger(budget) || budget < 1)
      throw new RangeError(`memoryBudgetBytes must be a positive integer, got ${String(budget)}`);
    this.#space = space;
    this.#options = options;
    this.#budget = budget;
    this.#log = options.log ?? (() => undefined);
  }

  /**
   * Tenant n, loaded (or loading) and held until the lease is released.
   * @throws what opening its system throws (StoreError for an empty or unreadable tenant); Error once closing.
   */
  async acquire(n: number): Promise<Lease> {
    for (;;) {
      if (this.#closing !== undefined) throw new Error("the tenant host is closing");
      let e = this.#entries.get(n);
      if (e?.state === "evicting") {
        await e.gone;
        continue;
      }
      e ??= this.#startLoad(n);
      e.leases++; // before the load ends: the eviction its end may run must not pick it
      try {
        await e.ready;
      } catch (err) {
        e.leases--;
        throw err;
      }
      e.lastUsed = ++this.#clock;
      return this.#lease(e);
    }
  }

  /** Whether tenant n is loaded now (not loading, not being evicted). */
  isLoaded(n: number): boolean {
    return this.#entries.get(n)?.state === "loaded";
  }

  /**
   * Evicts tenant n now, whatever the budget, leases and pins (a tenant being deleted or replaced), once
   * a load under way has ended; resolves once it is closed. Unload before deleting the tenant's rows:
   * closing stores a snapshot when changes came since the last. An acquire after it loads it again.
   */
  async unload(n: number): Promise<void> {
    for (;;) {
      const e = this.#entries.get(n);
      if (e === undefined) return;
      if (e.state === "loading") await e.ready.catch(() => undefined);
      else {
        if (e.state === "loaded") this.#evict(e);
        return e.gone;
      }
    }
  }

  stats(): TenantHostStats {
    let loaded = 0;
    for (const e of this.#entries.values()) if (e.state === "loaded") loaded++;
    return {
      loaded,
      loads: this.#loads,
      evictions: this.#evictions,
      estimatedBytes: this.#bytes,
      budgetBytes: this.#budget,
    };
  }

  /** Closes every loaded tenant (each stores a snapshot if changes came since its last), after the loads and evictions under way. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#entries.values()].map((e) => e.ready.catch(() => undefined)));
      const closing = [...this.#entries.values()].map(async (e) => {
        if (e.state === "evicting") return e.gone;
        e.state = "evicting";
        await e.reports?.settled();
        await e.durable?.close().catch((err: unknown) => this.#log(`closing tenant ${e.n} failed: ${message(err)}`));
        this.#entries.delete(e.n);
      });
      await Promise.all(closing);
      this.#bytes = 0;
    })();
    return this.#closing;
  }

  #lease(e: Entry): Lease {
    let held = true;
    return {
      n: e.n,
      durable: e.durable!,
      reports: e.reports!,
      release: () => {
        if (!held) return;
        held = false;
        e.leases--;
        e.lastUsed = ++this.#clock;
        // A report generated past its request keeps the tenant loaded (T32) until it ends.
        if (e.leases === 0 && e.reports!.generating) void e.reports!.settled().then(() => this.#enforce());
        this.#enforce();
      },
    };
  }

  #startLoad(n: number): Entry {
    const e: Entry = {
      n,
      state: "loading",
      ready: Promise.resolve(),
      leases: 0,
      writes: 0,
      lastUsed: ++this.#clock,
      chars: 0,
      patchChars: 0,
      bytes: 0,
    };
    this.#entries.set(n, e);
    e.ready = this.#load(e).catch((err: unknown) => {
      this.#entries.delete(n);
      throw err;
    });
    // A load nobody awaits any more (every acquire failed first) must not be an unhandled rejection.
    e.ready.catch(() => undefined);
    return e;
  }

  async #load(e: Entry): Promise<void> {
    const o = this.#options;
    const outbox = o.outboxFor?.(e.n);
    const durable = await (o.open ?? openDurableSystem)(this.#watched(e, this.#space.tenant(e.n)), {
      ...(outbox !== undefined ? { outbox } : {}),
      ...(o.snapshotEvery !== undefined ? { snapshotEvery: o.snapshotEvery } : {}),
      ...(o.now !== undefined ? { now: o.now } : {}),
      onSnapshotError: (err) =>
        this.#log(
          `storing a snapshot of tenant ${e.n} failed (its change log still has every change): ${message(err)}`,
        ),
    });
    try {
      e.reports = await ReportService.open({
        store: durable.store,
        flavour: durable.kind === "system" ? "holders" : "people",
        now: o.now ?? Date.now,
        indent: o.indent ?? 2,
        ...(o.maxReportEntries !== undefined ? { maxEntries: o.maxReportEntries } : {}),
        ...o.reportStore,
        onError: (err) => this.#log(`a report of tenant ${e.n} could not be stored: ${message(err)}`),
      });
      // Nothing else holds the durable system yet: its state cannot change while it is counted.
      e.chars = await jsonCharsInTurns(durable.target.live.current);
    } catch (err) {
      await durable.close().catch(() => undefined);
      throw err;
    }
    e.durable = durable;
    e.state = "loaded";
    this.#loads++;
    this.#reestimate(e);
    if (durable.kind === "system") this.#summarize(e, true);
    if (e.bytes > this.#budget)
      this.#log(
        `tenant ${e.n} alone is estimated at ${e.bytes} bytes, over the memory budget of ${this.#budget}: loaded anyway (T31)`,
      );
    this.#enforce();
  }

  /** Tenant n's store view, watched: its writes raise the estimate, its snapshots recount it, its cloud-node writes resummarize. */
  #watched(e: Entry, view: Store): Store {
    const written = <T>(patches: readonly (readonly unknown[])[], stored: Promise<T>): Promise<T> => {
      e.writes++;
      for (const p of patches) e.patchChars += patchChars(p);
      stored.then(
        (ok) => {
          e.writes--;
          // appendAt answers false for writes not taken at their number (nothing stored).
          const storedOk = (ok as unknown) !== false;
          if (storedOk && e.durable?.kind === "system" && patches.some(touchesCloudNodes)) this.#summarize(e, false);
          this.#reestimate(e);
          this.#enforce();
        },
        () => {
          e.writes--;
          this.#reestimate(e);
          this.#enforce();
        },
      );
      return stored;
    };
    const recount = (snapshot: unknown, done: Promise<void>): Promise<void> => {
      const since = e.patchChars;
      done.then(
        async () => {
          if (e.state !== "loaded") return;
          const chars = await jsonCharsInTurns(snapshot);
          if (e.state !== "loaded") return;
          e.chars = chars;
          e.patchChars = Math.max(0, e.patchChars - since);
          this.#reestimate(e);
        },
        () => undefined,
      );
      return done;
    };
    return new Proxy(view, {
      get: (target, key) => {
        if (key === "appendAt")
          return ((seq, writes, outbox) =>
            written(
              writes.map((w) => w.patches),
              outbox === undefined ? target.appendAt(seq, writes) : target.appendAt(seq, writes, outbox),
            )) satisfies Store["appendAt"];
        if (key === "append")
          return ((operation, patches, time, outbox) =>
            written([patches], target.append(operation, patches, time, outbox))) satisfies Store["append"];
        if (key === "snapshot")
          return ((seq, snapshot, time, pace) =>
            recount(snapshot, target.snapshot(seq, snapshot, time, pace))) satisfies Store["snapshot"];
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** Sets `e.bytes` from its counts, keeping the host's total. */
  #reestimate(e: Entry): void {
    const bytes = estimateBytes(e.chars + e.patchChars);
    if (e.state === "loaded") this.#bytes += bytes - e.bytes;
    e.bytes = bytes;
  }

  /** The cloud-node summary of a loaded system, handed on at load and when it changed. */
  #summarize(e: Entry, atLoad: boolean): void {
    const target = e.durable?.target;
    if (target?.kind !== "system" || this.#options.onSummary === undefined) return;
    const summary = systemSummary(target.live.current);
    if (!atLoad && e.summary !== undefined && sameSummary(e.summary, summary)) return;
    e.summary = summary;
    try {
      this.#options.onSummary(e.n, summary);
    } catch (err) {
      this.#log(`the summary of tenant ${e.n} could not be kept: ${message(err)}`);
    }
  }

  /** While the estimate is over the budget, evicts the least recently used tenant nothing keeps loaded. */
  #enforce(): void {
    while (this.#bytes > this.#budget && this.#closing === undefined) {
      let victim: Entry | undefined;
      for (const e of this.#entries.values())
        if (this.#evictable(e) && (victim === undefined || e.lastUsed < victim.lastUsed)) victim = e;
      if (victim === undefined) return;
      this.#evict(victim);
    }
  }

  #evictable(e: Entry): boolean {
    return (
      e.state === "loaded" &&
      e.leases === 0 &&
      e.writes === 0 &&
      e.reports?.generating !== true &&
      this.#options.pinned?.(e.n) !== true
    );
  }

  #evict(e: Entry): void {
    e.state = "evicting";
    this.#bytes -= e.bytes;
    this.#evictions++;
    e.gone = (async () => {
      try {
        await e.durable!.close();
      } catch (err) {
        this.#log(`evicting tenant ${e.n}: closing it failed: ${message(err)}`);
      } finally {
        this.#entries.delete(e.n);
      }
      try {
        this.#options.onEvicted?.(e.n);
      } catch (err) {
        this.#log(`evicting tenant ${e.n}: ${message(err)}`);
      }
    })();
  }
}
