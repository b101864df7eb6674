/**
 * rsop-engine/webhooks: events and their signatures, for an embedder with its own transport and for
 * receivers. A decision becomes an access event (`accessEvent`), an accepted write becomes
 * `entity.added|modified|removed` events (`changeEvents`), a subscription's secrecy level filters
 * each on a copy (`filterEvent`), and `signBody` / `verifySignature` make and check the
 * `X-SERVICE-SIGNATURE` header (HMAC-SHA1, constant-time comparison).
 *
 * Unlike the root entry it loads `node:crypto` (for the HMAC); it loads no server library.
 * @packageDocumentation
 */
export { accessEvent } from "./events/accessEvent.js";
export { changeEvents, threatLevelEvents } from "./events/changeEvents.js";
export { filterEvent } from "./events/filterEvent.js";
export { SIGNATURE_HEADER, signBody, verifySignature } from "./events/signature.js";

export type { AccessEventOptions } from "./events/accessEvent.js";
export type { ChangeInput, PatchLike } from "./events/changeEvents.js";
export type {
  AccessEvent,
  ChangeEvent,
  EntityType,
  SecrecyLevel,
  ThreatLevelEvent,
  WebhookEvent,
} from "./events/types.js";
export type { AccessTopic, ChangeTopic } from "./events/topics.js";
