/**
 * rsop-engine/node: the cloud node runtime, for a gateway that embeds it instead of running
 * `rsop node`. A `CloudNode` follows its system on the service over HTTP, keeps it in a local SQLite
 * file (better-sqlite3, an optional peer, loaded when a node starts), decides scans with the engine
 * also while the service can't be reached (by the offline rules), and uploads an access event of
 * each decision from a durable queue. It keeps the state of its areas and doors (who is inside
 * since when, each door's first person in) in the same file, decides each scan with it and records
 * it after (`accessState()`, `doorState()`). `ContactState`, `ScanAnswerer` and `ScanLines` are its
 * deciding core, usable alone over any engine (and an `AccessState` from rsop-engine).
 *
 * It loads Node built-ins (node:crypto, node:net, node:fs) and immer, but no server or CLI library.
 * @packageDocumentation
 */
export { CloudNode } from "./node/cloudNode.js";
export { ContactState } from "./node/contact.js";
export { NodeStoreError, REBASE_CHANGES } from "./node/nodeStore.js";
export { MAX_SCAN_LINE_BYTES, ScanAnswerer, ScanLines } from "./node/scanProtocol.js";
export { listenForScans, serveScans } from "./node/scanInput.js";
export { LinkError } from "./node/serviceLink.js";

export type { AnswerWriter, CloudNodeOptions, CloudNodeStatus } from "./node/cloudNode.js";
// What accessState(), doorState() and status().doors answer, named here too so a gateway needs one import.
export type { AccessStateJson, AccessStateView, DoorState } from "./evaluate/index.js";
export type { ContactOptions, ContactRecord } from "./node/contact.js";
export type { NodeIdentity, QueuedEvent } from "./node/nodeStore.js";
export type { EngineSource, ScanRecorder } from "./node/scanProtocol.js";
export type { LinkOptions } from "./node/serviceLink.js";
export type { ScanInput, ScanOutput, ScanServer } from "./node/scanInput.js";
