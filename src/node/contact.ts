// A cloud node's contact with the service, and the `node` state of a scan computed from it (N40–N44).
// The node never takes its connectivity from the scan: it knows whether it reaches the service, when
// it last did, and whether its clock can be trusted.
import type { NodeState } from "../model/index.js";

/**
 * What a node keeps of its contact across restarts (N43): persisted with its snapshot, since the
 * snapshot was downloaded during a contact and the kill timer runs from the last one.
 */
export interface ContactRecord {
  /** Epoch ms of the last successful contact with the service; null before any. */
  readonly lastContactMs: number | null;
  /** False when the node's clock is marked unreliable: offline decisions then have no time (N41). */
  readonly timeReliable: boolean;
}

/** Options of a contact state. */
export interface ContactOptions {
  /** The node's clock, epoch ms; default Date.now. */
  readonly now?: () => number;
  /** The persisted record to start from; default: no contact yet, clock reliable. */
  readonly record?: ContactRecord;
}

/**
 * A node's contact state: online while in contact with the service, else offline since its last
 * contact. It starts offline (N43): a node that restarts has not reached the service yet.
 * @example
 * const c = new ContactState({ now: () => Date.parse("2026-11-21T14:00:00Z") });
 * c.contact(Date.parse("2026-11-21T13:00:00Z"));
 * c.lost();
 * c.nodeStateAt(Date.parse("2026-11-21T14:00:00Z")); //=> { online: false, offlineSeconds: 3600, timeKnown: true }
 */
export class ContactState {
  readonly #now: () => number;
  #online = false;
  #lastContactMs: number | null;
  #timeReliable: boolean;

  constructor(options: ContactOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#lastContactMs = options.record?.lastContactMs ?? null;
    this.#timeReliable = options.record?.timeReliable ?? true;
  }

  /** The node's clock now, epoch ms. */
  now(): number {
    return this.#now();
  }

  /** Whether the node is in contact with the service. */
  get online(): boolean {
    return this.#online;
  }

  get lastContactMs(): number | null {
    return this.#lastContactMs;
  }

  get timeReliable(): boolean {
    return this.#timeReliable;
  }

  /**
   * A successful exchange with the service at `atMs` (default: the clock): online, and the last
   * contact is that instant, the clock's latest reading even when it is earlier than the one before
   * (a clock set back is believed, N42). The link calls this on every exchange (each heartbeat answer),
   * so the last contact is never older than one heartbeat while online.
   */
  contact(atMs: number = this.#now()): void {
    this.#online = true;
    this.#lastContactMs = atMs;
  }

  /** The service can no longer be reached: offline since the last contact (which stays as it was). */
  lost(): void {
    this.#online = false;
  }

  /** Marks the node's clock reliable or not (N41). */
  setTimeReliable(reliable: boolean): void {
    this.#timeReliable = reliable;
  }

  /** What to persist (N43). */
  record(): ContactRecord {
    return { lastContactMs: this.#lastContactMs, timeReliable: this.#timeReliable };
  }

  /**
   * The `node` field of a scan at `atMs` (N40–N42): online while in contact; else offline for the
   * whole seconds since the last contact (0 when the scan is before it), the time known unless the
   * clock is unreliable; with no contact ever, offline with the time unknown (N43).
   */
  nodeStateAt(atMs: number): NodeState {
    if (this.#online) return { online: true };
    const last = this.#lastContactMs;
    if (last === null) return { online: false, timeKnown: false };
    const offlineSeconds = Math.max(0, Math.floor((atMs - last) / 1000));
    return { online: false, offlineSeconds, timeKnown: this.#timeReliable };
  }
}
