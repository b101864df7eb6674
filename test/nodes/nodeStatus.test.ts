// statusOf (semantics N7, N8): the pure table of a cloud node's answered connection and sync status,
// from its last heartbeat, declared interval, acknowledged revision, failure and transfer flag.
import { describe, expect, test } from "vitest";
import { NEVER_REPORTED, type NodeState, statusOf } from "../../src/service/nodes/nodeStatus.js";

const T = Date.parse("2026-06-01T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const node = (over: Partial<NodeState>): NodeState => ({ ...NEVER_REPORTED, ...over });
const beating = (over: Partial<NodeState> = {}) =>
  node({ lastHeartbeat: T - 1000, acknowledged: { revision: 7, at: T - 60_000 }, ...over });

describe("statusOf", () => {
  test("a node that never reported: disconnected, no timestamps, blocked by an offline node", () => {
    expect(statusOf(NEVER_REPORTED, 0, T)).toEqual({
      connectionStatus: { connected: false, details: { timestamp: null } },
      syncStatus: { synced: false, details: { timestamp: null, dataFlowStatus: "BlockedByOfflineNode" } },
    });
  });

  test("synced at the system's revision: the time it acknowledged it, no dataFlowStatus", () => {
    const s = statusOf(beating(), 7, T);
    expect(s.connectionStatus).toEqual({ connected: true, details: { timestamp: iso(T - 1000) } });
    expect(s.syncStatus).toEqual({ synced: true, details: { timestamp: iso(T - 60_000) } });
  });

  test.each([
    ["Pending", beating(), 8],
    ["Started", beating({ transfer: true }), 8],
    ["BlockedByFailure", beating({ failure: { revision: 8, message: "no room" } }), 8],
    [
      "BlockedByFailure (failure wins over a transfer)",
      beating({ transfer: true, failure: { revision: 8, message: "x" } }),
      9,
    ],
    ["BlockedByOfflineNode", beating({ lastHeartbeat: T - 15_001 }), 8],
    [
      "BlockedByOfflineNode (offline wins over a failure)",
      beating({ lastHeartbeat: T - 16_000, failure: { revision: 8, message: "x" } }),
      8,
    ],
    [
      "Pending (a failure of a revision already acknowledged is over)",
      beating({ failure: { revision: 7, message: "x" } }),
      8,
    ],
  ] as const)("%s", (name, state, revision) => {
    const s = statusOf(state, revision, T);
    expect(s.syncStatus).toEqual({
      synced: false,
      details: { timestamp: iso(T - 60_000), dataFlowStatus: name.split(" ")[0] },
    });
  });

  test("the 3-interval rule: connected at exactly 3 intervals, not 1 ms after; the interval is the node's", () => {
    const at = (last: number, intervalSeconds = 5) =>
      statusOf(beating({ lastHeartbeat: last, intervalSeconds }), 7, T).connectionStatus.connected;
    expect(at(T - 15_000)).toBe(true);
    expect(at(T - 15_001)).toBe(false);
    expect(at(T - 30_000, 10)).toBe(true);
    expect(at(T - 30_001, 10)).toBe(false);
    expect(at(T - 3000, 1)).toBe(true);
    expect(at(T - 3001, 1)).toBe(false);
  });

  test("a stored heartbeat time counts with its slack", () => {
    const s = statusOf(beating({ lastHeartbeat: T - 40_000, heartbeatSlackMs: 30_000 }), 7, T);
    expect(s.connectionStatus).toEqual({ connected: true, details: { timestamp: iso(T - 40_000) } });
    expect(
      statusOf(beating({ lastHeartbeat: T - 45_001, heartbeatSlackMs: 30_000 }), 7, T).connectionStatus.connected,
    ).toBe(false);
  });

  test("offline with no change since: still synced; offline with changes waiting: blocked", () => {
    const offline = beating({ lastHeartbeat: T - 3_600_000 });
    expect(statusOf(offline, 7, T).syncStatus.synced).toBe(true);
    expect(statusOf(offline, 7, T).connectionStatus.connected).toBe(false);
    expect(statusOf(offline, 8, T).syncStatus.details.dataFlowStatus).toBe("BlockedByOfflineNode");
  });

  test("a node connected but never acknowledging: Pending, no sync timestamp", () => {
    expect(statusOf(node({ lastHeartbeat: T }), 3, T).syncStatus).toEqual({
      synced: false,
      details: { timestamp: null, dataFlowStatus: "Pending" },
    });
  });
});
