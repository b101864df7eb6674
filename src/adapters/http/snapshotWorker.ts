// The worker thread of a snapshot reload: reads the file, hashes it, parses and validates it, all off
// the server's event loop, and hands back either every problem or the validated snapshot as JSON
// text (a string crosses threads as one copy; a structured clone of the object graph would cost the
// main thread more to rebuild than JSON.parse does). Every top-level array (holders above all) is
// sent in slices, so the main thread can parse it a slice at a time and answer requests in between;
// a slice whose hash the main thread already knows (unchanged since the snapshot it serves) is not
// sent at all, and the main thread keeps that slice's objects.
// See startServer.ts, reloadNow, and loadSnapshotFile.ts, parseSnapshotSlices.
import { parentPort, workerData } from "node:worker_threads";
import { createHash } from "node:crypto";
import { SNAPSHOT_SLICE, type SliceHashes, type WorkerAnswer, readSnapshotFile } from "./loadSnapshotFile.js";

const { path, known } = workerData as { path: string; known: SliceHashes | null };
const knownHashes = new Map(known ?? []);
const read = await readSnapshotFile(path);
let answer: WorkerAnswer;
if (read.ok) {
  const rest: Record<string, unknown> = {};
  const arrays: [string, (string | null)[]][] = [];
  const hashes: [string, string[]][] = [];
  for (const [key, value] of Object.entries(read.snapshot)) {
    if (Array.isArray(value)) {
      const parts: (string | null)[] = [];
      const sums: string[] = [];
      const before = knownHashes.get(key);
      for (let i = 0, k = 0; i < value.length; i += SNAPSHOT_SLICE, k++) {
        const json = JSON.stringify(value.slice(i, i + SNAPSHOT_SLICE));
        const sum = createHash("sha256").update(json).digest("base64");
        sums.push(sum);
        // A slice the receiver has already (same position, same hash) is not sent again.
        parts.push(before !== undefined && before[k] === sum ? null : json);
      }
      arrays.push([key, parts]);
      hashes.push([key, sums]);
      rest[key] = [];
    } else rest[key] = value;
  }
  answer = { ok: true, sha256: read.sha256, slices: { rest: JSON.stringify(rest), arrays, hashes } };
} else
  answer = { ok: false, issues: read.issues.map((i) => ({ code: i.code, path: [...i.path], message: i.message })) };
parentPort!.postMessage(answer);
