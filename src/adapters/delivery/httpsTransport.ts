// The webhook transport of `rsop serve --data`: HTTPS through keep-alive agents, one per subscription,
// to the addresses the destination policy allows.
import type { WebhookTransport } from "../../service/webhooks/transport.js";
import { Agents, deliver } from "./deliver.js";
import { Destinations } from "./destinations.js";

/**
 * The HTTPS transport for a destination policy.
 * @param allow - addresses (CIDRs, or single addresses) allowed although refused by default (HW1).
 * @throws RangeError for a malformed entry of `allow`.
 */
export function httpsTransport(allow: readonly string[]): WebhookTransport & { readonly destinations: Destinations } {
  const destinations = new Destinations(allow);
  const agents = new Agents(destinations);
  return {
    destinations,
    send: (sub, body, timeoutMs, signal) =>
      deliver(sub, body, agents.get(sub.id, sub.sslVerification), destinations, timeoutMs, signal),
    drop: (id) => agents.drop(id),
  };
}
