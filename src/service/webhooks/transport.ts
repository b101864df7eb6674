// The port between the webhook dispatcher and the wire. The service owns the outbox order, retries,
// backoff and parking; a transport only sends one notification and says how it went. The HTTPS one
// (adapters/delivery) connects only to addresses its destination policy allows (HW1).
import type { DestinationPolicy, Subscription } from "./subscription.js";

/** The outcome of one attempt: `error` is the coarse category stored as `lastError`, `detail` goes to the log only (HW2). */
export type Attempt =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly error: string; readonly detail: string };

/** Sends notifications for the dispatcher. */
export interface WebhookTransport {
  /** The destination policy the subscription routes check a URL against. */
  readonly destinations: DestinationPolicy;
  /**
   * One attempt to send `body` to the subscription's url.
   * @param signal - aborts the attempt (the server is closing).
   */
  send(subscription: Subscription, body: string, timeoutMs: number, signal: AbortSignal): Promise<Attempt>;
  /** Closes the connections of a subscription (or of all). */
  drop(id?: string): void;
}
