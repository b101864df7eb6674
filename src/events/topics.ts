// The event catalogue: every topic a subscription may name, and its category. Cloud-node events
// happen at a node (an array scope of node ids filters them); organization events concern the
// organization; system events (`entity.*` in 2.0) concern the system's data. 1.0 calls cloud-node
// events panel events and counts `entity.*` among them.

/** Which interface generation a subscription belongs to: 2.0 systems or 1.0 panels. */
export type Generation = "2.0" | "1.0";

/** The category of a topic: never mix `organization` and `cloudNode` topics in one subscription. */
export type TopicCategory = "organization" | "cloudNode" | "system";

/** The change-event topics, shared by both generations. */
export const CHANGE_TOPICS = ["entity.added", "entity.modified", "entity.removed"] as const;
/** A change-event topic. */
export type ChangeTopic = (typeof CHANGE_TOPICS)[number];

/** The access-event topics of 2.0 systems. */
export const DEVICE_TOPICS = ["device.request.allowed", "device.request.denied", "device.request.unknown"] as const;
/** The access-event topics of 1.0 panels. */
export const DOOR_TOPICS = ["door.request.allowed", "door.request.denied", "door.request.unknown"] as const;
/** An access-event topic of either generation. */
export type AccessTopic = (typeof DEVICE_TOPICS)[number] | (typeof DOOR_TOPICS)[number];

/** A cloud node's threat level changed (docs/semantics.md TL1): a 2.0 cloud-node event. */
export const THREAT_LEVEL_TOPIC = "cloudNode.threatLevel.changed";
export type ThreatLevelTopic = typeof THREAT_LEVEL_TOPIC;

const ORGANIZATION_2 = [
  "organization.created",
  "organization.deleted",
  "organization.updated",
  "permission.accepted",
  "permission.created",
  "permission.deleted",
  "permission.updated",
] as const;
const ORGANIZATION_1 = [
  "ou.created",
  "ou.deleted",
  "ou.updated",
  "panel.created",
  "panel.deleted",
  "panel.updated",
  "permission.accepted",
] as const;

/** Every known topic of a generation and its category. */
export const TOPICS: Readonly<Record<Generation, ReadonlyMap<string, TopicCategory>>> = {
  "2.0": new Map<string, TopicCategory>([
    ...ORGANIZATION_2.map((t) => [t, "organization"] as const),
    ...DEVICE_TOPICS.map((t) => [t, "cloudNode"] as const),
    [THREAT_LEVEL_TOPIC, "cloudNode"],
    ...CHANGE_TOPICS.map((t) => [t, "system"] as const),
  ]),
  "1.0": new Map<string, TopicCategory>([
    ...ORGANIZATION_1.map((t) => [t, "organization"] as const),
    ...DOOR_TOPICS.map((t) => [t, "cloudNode"] as const),
    ...CHANGE_TOPICS.map((t) => [t, "cloudNode"] as const),
  ]),
};
