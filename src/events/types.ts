// The event bodies a subscriber receives (JSON), before the secrecy filter of its subscription.
import type { CardNumber, Reason } from "../model/index.js";
import type { AccessTopic, ChangeTopic, ThreatLevelTopic } from "./topics.js";

/** What happened at a device: one decision as an event. No typed PIN is ever part of it. */
export interface AccessEvent {
  readonly topic: AccessTopic;
  /** The event's own id (UUID), the same on every delivery attempt. */
  readonly id: string;
  /** The instant of the scan (ISO 8601, UTC). */
  readonly occurredAt: string;
  readonly systemId: string;
  /** The device's cloud node; null for a device the system does not know. */
  readonly cloudNode: { readonly id: string; readonly name: string | null } | null;
  /** The device (its name null when the system does not know it). */
  readonly device: { readonly id: string; readonly name: string | null };
  /** The holder the credential or PIN belongs to; null when none could be tied to one. */
  readonly holder: {
    readonly id: string;
    readonly firstName?: string | null;
    readonly lastName?: string | null;
  } | null;
  /** The credential as read (id null when no credential has the number read); null when none was presented or read. */
  readonly credential: {
    readonly id: string | null;
    /** A number up to 2^53−1, else its decimal string (CN3). */
    readonly credentialNumber: CardNumber | null;
    readonly facilityCode: number | null;
  } | null;
  readonly reason: Reason;
  readonly activeRuleId: string | null;
  readonly duress: boolean;
  readonly floors: readonly string[];
}

/** The kinds of entity a change event names. */
export type EntityType =
  | "holder"
  | "credential"
  | "group"
  | "cloudNode"
  | "connection"
  | "device"
  | "partition"
  | "customField"
  | "floorGroup"
  | "rule"
  | "calendar"
  | "area";

/** One entity added, modified or removed by an accepted write. */
export interface ChangeEvent {
  readonly topic: ChangeTopic;
  readonly id: string;
  readonly occurredAt: string;
  /** The system id (a 1.0 panel: its serial number). */
  readonly systemId: string;
  readonly entityType: EntityType;
  /** The entity's id (a number on 1.0 panels; a custom field's id is unique within its partition only). */
  readonly entityId: string | number;
  /** The entity after the change; before it, for `entity.removed`. */
  readonly data: unknown;
}

/**
 * A cloud node's threat level changed (docs/semantics.md TL1): sent beside the node's
 * `entity.modified`, so that a subscriber can follow the level without diffing nodes.
 */
export interface ThreatLevelEvent {
  readonly topic: ThreatLevelTopic;
  readonly id: string;
  readonly occurredAt: string;
  readonly systemId: string;
  readonly cloudNodeId: string;
  /** The level now, 0–255 (0: normal). */
  readonly level: number;
  /** The level before the change. */
  readonly previous: number;
}

/** Any event this library builds. */
export type WebhookEvent = AccessEvent | ChangeEvent | ThreatLevelEvent;

/** How much a subscriber may see: 0 everything, 1 no PINs or credentials, 2 also no names or email. */
export type SecrecyLevel = 0 | 1 | 2;
