// The worker thread of a snapshot reload: reads the file, hashes it, parses and validates it, all off
// the server's event loop, and hands back either every problem or the validated snapshot as JSON
// text (a string crosses threads as one copy; a structured clone of the object graph would cost the
// main thread more to rebuild than JSON.parse does). See startServer.ts, reloadNow.
import { parentPort, workerData } from "node:worker_threads";
import { readSnapshotFile } from "./loadSnapshotFile.js";

/** What the worker posts back: every problem, or the normalized snapshot as JSON with the file's SHA-256. */
export type WorkerAnswer =
  | { readonly ok: false; readonly issues: readonly { code: string; path: (string | number)[]; message: string }[] }
  | { readonly ok: true; readonly sha256: string; readonly snapshotJson: string };

const { path } = workerData as { path: string };
const read = await readSnapshotFile(path);
const answer: WorkerAnswer = read.ok
  ? { ok: true, sha256: read.sha256, snapshotJson: JSON.stringify(read.snapshot) }
  : { ok: false, issues: read.issues.map((i) => ({ code: i.code, path: [...i.path], message: i.message })) };
parentPort!.postMessage(answer);
