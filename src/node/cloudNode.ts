// A running cloud node (N53–N66): its system's engine, kept in step with the service's change log
// and stored in a local file; its contact with the service; the state of its areas and doors (SPEC
// §15, AB7), stored in the same file; scans decided locally with that state, each an access event
// queued durably and uploaded in order; heartbeats acknowledging its revision.
import { randomUUID } from "node:crypto";
import type { Patch } from "immer";
import type { AccessStateJson, DoorState, Engine } from "../evaluate/index.js";
import { type LiveSystem, createLiveSystem } from "../live/index.js";
import { ContactState } from "./contact.js";
import { EVERYTHING, type NodeAccessState, type ReconcileScope, reconcile, scopeOf } from "./nodeAccess.js";
import { type NodeIdentity, NodeStore, type QueuedEvent } from "./nodeStore.js";
import { type EngineSource, ScanAnswerer, ScanLines } from "./scanProtocol.js";
import { type FeedLine, type HeartbeatBody, LinkError, type LinkOptions, ServiceLink } from "./serviceLink.js";

/** How a node runs. */
export interface CloudNodeOptions extends LinkOptions {
  /** The node's SQLite data file (made when missing). */
  readonly dataFile: string;
  /** The node's clock, epoch ms; default Date.now. */
  readonly now?: () => number;
  /** Seconds between heartbeats, 1–300; default 5 (N5). */
  readonly heartbeatSeconds?: number;
  /** The hardware items the node reports (N4): its connections and readers. */
  readonly hardware?: readonly unknown[];
  /** The wireless diagnostics the node reports (N27): its wireless networks, their nodes and links. */
  readonly wireless?: readonly unknown[];
  /** False when the node's clock can't be trusted (N41); default: as stored, else true. */
  readonly timeReliable?: boolean;
  /** The first wait before calling the service again after a failure, ms (doubles up to 5 s); default 250. */
  readonly retryMs?: number;
  /** Where the node says what it does (one line each); default: nowhere. */
  readonly log?: (line: string) => void;
  /** Told of each decision as it is queued, with the revision it was made at (for tests and audits). */
  readonly onDecision?: (event: Omit<QueuedEvent, "seq">) => void;
}

/** What a node is doing, for its operator. */
export interface CloudNodeStatus {
  readonly online: boolean;
  /** The revision of the system it holds; null before its first download. */
  readonly revision: number | null;
  readonly lastContact: string | null;
  /** Access events not yet uploaded. */
  readonly pendingEvents: number;
  /** Access events the service refused one by one, kept aside in the data file (N66). */
  readonly rejectedEvents: number;
  /**
   * The node's doors an unlock rule holds unlocked now, or that wait for their first person in
   * (docs/semantics.md UF2), by device id; [] before the node's first download.
   */
  readonly doors: readonly DoorState[];
}

/** Writes the answers of one input chunk (already joined, each line ending in "\n"). */
export type AnswerWriter = (text: string) => void;

/** At most this many events, and about this many bytes, per upload (N21 allows 1,000 and 1 MiB). */
const UPLOAD_EVENTS = 1000;
const UPLOAD_BYTES = 900 * 1024;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });

/**
 * A cloud node. Start one with CloudNode.start; feed it scans with `scanStream` (or `answer`), and
 * close it when done.
 * @example
 * const node = await CloudNode.start({ service, systemId, nodeId, token, dataFile: "node.db" });
 * const scans = node.scanStream((text) => process.stdout.write(text));
 * process.stdin.on("data", (chunk) => scans.push(chunk));
 */
export class CloudNode implements EngineSource {
  readonly contact: ContactState;
  readonly #options: CloudNodeOptions;
  readonly #store: NodeStore;
  readonly #link: ServiceLink;
  readonly #closing = new AbortController();
  readonly #log: (line: string) => void;
  readonly #intervalSeconds: number;
  #live: LiveSystem | null = null;
  /** Who is inside each area, and each door's first person in (docs/semantics.md AB7); stored with each change. */
  readonly #access: NodeAccessState;
  /** What scans are decided by: the engine of the moment, and the access state. */
  readonly #source: EngineSource;
  /** The system must be downloaded again (N15, N9); the one held decides until the new one is there. */
  #stale = false;
  #revision: number | null = null;
  /** Events decided in the current input chunk, queued before its answers are written (N56). */
  #decided: Omit<QueuedEvent, "seq">[] = [];
  #failure: { revision: number; message: string } | null | undefined = undefined;
  #hardwareSent = false;
  #transfer = false;
  #beating: Promise<void> | null = null;
  #beatAgain = false;
  #uploading: Promise<void> | null = null;
  #loops: Promise<unknown>[] = [];
  #savedContactMs = Number.NEGATIVE_INFINITY;
  /** Settled by the first heartbeat's answer or failure. */
  #firstBeat: Promise<void> | null = null;
  #gotSystem!: () => void;
  readonly #hasSystem = new Promise<void>((resolve) => {
    this.#gotSystem = resolve;
  });

  private constructor(options: CloudNodeOptions, store: NodeStore) {
    this.#options = options;
    this.#store = store;
    this.#link = new ServiceLink(options);
    this.#log = options.log ?? (() => {});
    this.#intervalSeconds = options.heartbeatSeconds ?? 5;
    const stored = store.load();
    this.#access = stored.access;
    const node = this;
    this.#source = {
      get engine() {
        return node.engine;
      },
      state: this.#access,
    };
    this.contact = new ContactState({
      ...(options.now !== undefined ? { now: options.now } : {}),
      record: {
        lastContactMs: stored.contact?.lastContactMs ?? null,
        timeReliable: options.timeReliable ?? stored.contact?.timeReliable ?? true,
      },
    });
    this.#restore(stored);
  }

  /**
   * Opens the node's data file, takes up its stored system (it decides from the first scan on,
   * offline until it reaches the service, N43), and starts following the service.
   * @throws NodeStoreError when the data file can't be used.
   */
  static async start(options: CloudNodeOptions): Promise<CloudNode> {
    const s = options.heartbeatSeconds;
    if (s !== undefined && !(Number.isInteger(s) && s >= 1 && s <= 300))
      throw new RangeError(`heartbeatSeconds must be a whole number from 1 to 300, got ${s}`);
    const identity: NodeIdentity = {
      service: options.service.replace(/\/+$/, ""),
      systemId: options.systemId,
      nodeId: options.nodeId,
    };
    const node = new CloudNode(options, await NodeStore.open(options.dataFile, identity));
    node.#loops = [node.#syncLoop(), node.#heartbeatLoop()];
    node.#firstBeat = node.#beating;
    node.#upload();
    return node;
  }

  /**
   * Resolves once the node has a system (stored or downloaded) and its first heartbeat has been
   * answered or has failed: from then on it knows whether it is online (N57). Never rejects; waits
   * as long as the service can't give a node without a stored system its first download.
   */
  async ready(): Promise<void> {
    await this.#hasSystem;
    await this.#firstBeat;
  }

  /** The engine scans are decided by; null before the node's first download. */
  get engine(): Engine | null {
    return this.#live?.engine ?? null;
  }

  status(): CloudNodeStatus {
    const last = this.contact.lastContactMs;
    return {
      online: this.contact.online,
      revision: this.#revision,
      lastContact: last === null ? null : new Date(last).toISOString(),
      pendingEvents: this.#store.pending(),
      rejectedEvents: this.#store.rejected(),
      doors: this.#doors(),
    };
  }

  /**
   * Whether an unlock rule holds the door unlocked at the node's clock now (docs/semantics.md UF2),
   * with the first person in the node has seen; null for a device its system doesn't have, or before
   * its first download.
   */
  doorState(deviceId: string): DoorState | null {
    return this.engine?.doorState(deviceId, this.contact.now(), this.#access) ?? null;
  }

  #doors(): DoorState[] {
    const engine = this.engine;
    if (engine === null) return [];
    const now = this.contact.now();
    const out: DoorState[] = [];
    for (const d of engine.snapshot.devices) {
      if (d.cloudNode !== this.#options.nodeId) continue;
      const door = engine.doorState(d.id, now, this.#access);
      if (door !== null && (door.unlocked || door.waitingForFirstAllow)) out.push(door);
    }
    return out.sort((a, b) => (a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : 0));
  }

  /**
   * The state the node keeps for its areas and doors (docs/semantics.md AB7): who is inside
   * each area since when (epoch ms), and each door's first allowed scan of its unlock window. A copy:
   * changing it changes nothing at the node.
   */
  accessState(): AccessStateJson {
    return this.#access.toJSON();
  }

  /**
   * A scan input (N45–N50, N56): bytes in, in chunks of any size; after each chunk, the events of
   * the scans it ended are queued durably, then their answers are written, in order.
   */
  scanStream(write: AnswerWriter): { push(chunk: Uint8Array): void; end(): void } {
    let out: string[] = [];
    const lines = new ScanLines(new ScanAnswerer(this.#source, this.contact, this.#record), (a) => out.push(a));
    const settle = () => {
      this.#queueDecided();
      if (out.length > 0) write(`${out.join("\n")}\n`);
      out = [];
    };
    return {
      push(chunk) {
        lines.push(chunk);
        settle();
      },
      end() {
        lines.end();
        settle();
      },
    };
  }

  /** Uploads the queue now; resolves when it is empty or an upload failed. */
  async flush(): Promise<void> {
    while (this.#uploading !== null) await this.#uploading;
    this.#upload();
    while (this.#uploading !== null) await this.#uploading;
  }

  /** Stops following the service and closes the data file; queued events stay in it. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await Promise.allSettled([...this.#loops, this.#uploading, this.#beating]);
    this.#store.close();
  }

  readonly #record = (request: unknown, decision: string, atMs: number): void => {
    this.#decided.push({
      eventId: randomUUID(),
      occurredAt: new Date(atMs).toISOString(),
      revision: this.#revision ?? 0,
      request: JSON.stringify(request),
      decision,
    });
  };

  #queueDecided(): void {
    const changes = this.#access.takeChanges();
    if (this.#decided.length === 0) {
      this.#store.saveAccess(changes);
      return;
    }
    const events = this.#decided;
    this.#decided = [];
    // The state the scans moved is stored with their events, before their answers are written (AB7).
    this.#store.enqueue(events, changes);
    if (this.#options.onDecision !== undefined) for (const e of events) this.#options.onDecision(e);
    this.#upload();
  }

  /** The stored system, replayed (N55); a file that can't be replayed is dropped and downloaded again. */
  #restore(stored: ReturnType<NodeStore["load"]>): void {
    if (stored.base === null) return;
    const live = createLiveSystem(stored.base.snapshot);
    if (!live.ok) {
      this.#log(`stored snapshot refused, downloading it again: ${live.issues[0]?.message}`);
      return;
    }
    let revision = stored.base.revision;
    for (const c of stored.changes) {
      if (c.revision !== revision + 1 || !live.value.applyPatches(c.patches as Patch[]).ok) {
        this.#log(`stored change ${c.revision} can't be replayed, downloading the system again`);
        return;
      }
      revision = c.revision;
    }
    this.#live = live.value;
    this.#revision = revision;
    // A reset seen but not yet applied when the node stopped is applied now (by value, AB6).
    this.#reconcile(EVERYTHING);
    this.#gotSystem();
  }

  /** Applies the resets and deletions the snapshot shows to the access state, and stores them (AB6). */
  #reconcile(scope: ReconcileScope): void {
    if (this.#live === null || (!scope.areas && !scope.holders && !scope.devices)) return;
    reconcile(this.#live.snapshot, this.#access, scope);
    this.#store.saveAccess(this.#access.takeChanges());
  }

  /** A call answered: online since now (N42), saved so a restart counts from it (N43). */
  #reached(): void {
    const wasOnline = this.contact.online;
    this.contact.contact();
    // Saved at most once a second while online (a feed line is a contact too): after a restart the
    // kill timer may then count up to a second more, never less (N43).
    const last = this.contact.lastContactMs!;
    if (!wasOnline || Math.abs(last - this.#savedContactMs) >= 1000) {
      this.#store.saveContact(this.contact.record());
      this.#savedContactMs = last;
    }
    if (!wasOnline)
      this.#log(this.#revision === null ? "online, no system yet" : `online at revision ${this.#revision}`);
    this.#upload();
  }

  /** A call failed: offline from the last contact on (N40). */
  #missed(e: unknown): void {
    if (this.#closing.signal.aborted) return;
    if (!this.contact.online) return;
    this.contact.lost();
    this.#store.saveContact(this.contact.record());
    this.#log(`offline: ${(e as Error).message}`);
  }

  /** Downloads when it has no system, then follows the change log; again after each failure. */
  async #syncLoop(): Promise<void> {
    const retry = this.#options.retryMs ?? 250;
    let wait = retry;
    const signal = this.#closing.signal;
    while (!signal.aborted) {
      try {
        if (this.#live === null || this.#stale) await this.#download();
        const broke = await this.#link.follow(this.#revision!, signal, (line) => this.#onFeedLine(line));
        wait = retry;
        // A feed that broke after it opened is no lost contact: the node reconnects, and only a
        // reconnect that fails makes it offline (N59). A short pause keeps a flapping link from spinning.
        if (broke !== null && !signal.aborted) {
          this.#log(`${broke}: reconnecting from revision ${this.#revision}`);
          await sleep(retry, signal);
        }
      } catch (e) {
        if (signal.aborted) break;
        this.#onSyncError(e);
        await sleep(wait, signal);
        wait = Math.min(wait * 2, 5000);
      }
    }
  }

  #onSyncError(e: unknown): void {
    const status = e instanceof LinkError ? e.status : undefined;
    if (status === 410 || status === 409) {
      // The log no longer reaches back to this revision (410), or the service's is behind it (409, a
      // restored database): the node downloads the system again, and decides with the one it has
      // until the new one is there (N61).
      this.#log(`the service can't follow on from revision ${this.#revision}: downloading the system again`);
      this.#stale = true;
      return;
    }
    if (e instanceof ApplyFailure) return;
    if (e instanceof LinkError) this.#missed(e);
    else this.#log(`the change feed failed: ${(e as Error).message}`);
  }

  async #download(): Promise<void> {
    this.#transfer = true;
    this.#beatSoon();
    try {
      const got = await this.#link.snapshot(this.#closing.signal);
      this.#reached();
      const live = createLiveSystem(got.snapshot);
      if (!live.ok) {
        this.#failure = { revision: got.revision, message: `snapshot refused: ${live.issues[0]?.message}` };
        throw new ApplyFailure(this.#failure.message);
      }
      this.#store.saveSnapshot(got.revision, got.snapshot);
      this.#live = live.value;
      this.#stale = false;
      this.#revision = got.revision;
      this.#reconcile(EVERYTHING);
      this.#gotSystem();
      this.#log(`downloaded the system at revision ${got.revision}`);
    } finally {
      this.#transfer = false;
      this.#beatSoon();
    }
  }

  /** One feed line (N14–N17): a change applied, stored and acknowledged; a keep-alive is contact. */
  #onFeedLine(line: FeedLine): void {
    if ("error" in line) throw new LinkError(line.error.message, line.error.status);
    this.#reached();
    if ("keepAlive" in line) return;
    const current = this.#revision!;
    if (line.revision <= current) return;
    if (line.revision !== current + 1) throw new LinkError(`the feed skipped from ${current} to ${line.revision}`);
    const applied = this.#live!.applyPatches(line.patches as Patch[]);
    if (!applied.ok) {
      const message = `change ${line.revision} refused: ${applied.issues[0]?.message}`;
      this.#failure = { revision: line.revision, message };
      this.#log(message);
      this.#stale = true; // downloaded again on the next turn of the loop; the change was undone
      this.#beatSoon();
      throw new ApplyFailure(message);
    }
    if (this.#store.appendChange(line.revision, line.patches))
      this.#store.saveSnapshot(line.revision, this.#live!.snapshot);
    this.#revision = line.revision;
    this.#reconcile(scopeOf(line.patches as Patch[]));
    if (this.#failure !== undefined && this.#failure !== null) this.#failure = null;
    this.#beatSoon();
  }

  async #heartbeatLoop(): Promise<void> {
    const signal = this.#closing.signal;
    while (!signal.aborted) {
      this.#beatSoon();
      await sleep(this.#intervalSeconds * 1000, signal);
    }
  }

  /** Sends a heartbeat now, or right after the one in flight (an acknowledgement is never late). */
  #beatSoon(): void {
    if (this.#closing.signal.aborted) return;
    if (this.#beating !== null) {
      this.#beatAgain = true;
      return;
    }
    this.#beating = this.#beat().finally(() => {
      this.#beating = null;
      if (this.#beatAgain) {
        this.#beatAgain = false;
        this.#beatSoon();
      }
    });
  }

  async #beat(): Promise<void> {
    const failure = this.#failure;
    const body: HeartbeatBody = {
      revision: this.#revision ?? 0,
      intervalSeconds: this.#intervalSeconds,
      transfer: this.#transfer,
      ...(failure !== undefined ? { failure } : {}),
      ...(!this.#hardwareSent && this.#options.hardware !== undefined ? { hardware: this.#options.hardware } : {}),
      ...(!this.#hardwareSent && this.#options.wireless !== undefined ? { wireless: this.#options.wireless } : {}),
    };
    try {
      await this.#link.heartbeat(body, this.#closing.signal);
      this.#hardwareSent = true;
      // Said once: a failure stays recorded at the service until a later revision is acknowledged.
      if (this.#failure === failure && failure !== undefined) this.#failure = undefined;
      this.#reached();
    } catch (e) {
      this.#missed(e);
    }
  }

  /** Starts uploading the queue unless an upload runs or the node is offline (N53). */
  #upload(): void {
    if (this.#uploading !== null || this.#closing.signal.aborted || !this.contact.online) return;
    this.#uploading = this.#uploadAll().finally(() => {
      this.#uploading = null;
    });
  }

  async #uploadAll(): Promise<void> {
    // After a batch is refused for what it holds, events go one at a time until the one refused
    // alone is found and moved aside (N66): one bad event must not hold back every later one.
    let single = false;
    for (;;) {
      const batch = this.#store.peek(single ? 1 : UPLOAD_EVENTS, UPLOAD_BYTES);
      if (batch.length === 0 || this.#closing.signal.aborted) return;
      try {
        // The stored request and decision are JSON already: the body is written around them.
        const events = batch.map(
          (e) =>
            `{"eventId":${JSON.stringify(e.eventId)},"occurredAt":${JSON.stringify(e.occurredAt)},"request":${e.request},"decision":${e.decision}}`,
        );
        const got = await this.#link.upload(`{"events":[${events.join(",")}]}`, this.#closing.signal);
        this.#store.remove(batch[batch.length - 1]!.seq);
        this.#log(`uploaded ${got.accepted} events (${got.duplicates} already there)`);
        this.#reached();
      } catch (e) {
        if (e instanceof LinkError && isContentRefusal(e.status)) {
          single = batch.length > 1;
          if (!single) {
            this.#store.reject(batch[0]!.seq, e.status!, e.message, new Date(this.contact.now()).toISOString());
            this.#log(`the service refused event ${batch[0]!.eventId}, kept aside in the data file: ${e.message}`);
          }
          continue;
        }
        // Kept in the queue: sent again, in the same order, after the next successful call. A
        // refusal is an answer: it is logged, and the node stays in contact.
        if (e instanceof LinkError && isRefusal(e.status)) this.#log(`the service refused an upload: ${e.message}`);
        else this.#missed(e);
        return;
      }
    }
  }
}

/** A refusal of what an upload holds (400, 413, 422), not of the node sending it (N66). */
const isContentRefusal = (status: number | undefined) => status === 400 || status === 413 || status === 422;

/** A 4xx answer that is about the request, not about the node being cut off (N59). */
const isRefusal = (status: number | undefined) =>
  status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 404;

/** A change or snapshot the node could not apply: reported in its heartbeat (N9), not a lost contact. */
class ApplyFailure extends Error {
  override name = "ApplyFailure";
}
