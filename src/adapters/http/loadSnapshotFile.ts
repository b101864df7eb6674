// Reads, validates and compiles a snapshot file for the server; every failure is a list of issues,
// never an exception, so a bad file on reload is logged and refused.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { Engine } from "../../evaluate/index.js";
import { type Issue, type SystemSnapshot, parseSnapshot } from "../../model/index.js";
import { JSON_MAX_DEPTH, tooDeepMessage } from "../../model/plainCopy.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";

/** A compiled snapshot file, or every reason it could not be used. */
export type LoadedSnapshot =
  | { readonly ok: true; readonly engine: Engine; readonly sha256: string }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/** A validated (not yet compiled) snapshot file, or every reason it could not be used. */
export type ReadSnapshot =
  | { readonly ok: true; readonly snapshot: SystemSnapshot; readonly sha256: string }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/**
 * Reads `path`: read (issue `unreadable`), JSON (issue `invalidJson` with the line and column only,
 * never the text; `tooBig` at the path of a value nested deeper than JSON_MAX_DEPTH), then snapshot
 * validation.
 */
export async function readSnapshotFile(path: string): Promise<ReadSnapshot> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    return {
      ok: false,
      issues: [
        {
          code: "unreadable",
          path: [],
          message: `Cannot read the file: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`,
        },
      ],
    };
  }
  // JSON.parse's own message quotes the text around the error, PINs included: line and column only (HJ4).
  const json = parseJson(bytes.toString("utf8"));
  if (!json.ok) {
    if (json.path !== undefined)
      return {
        ok: false,
        issues: [
          { code: "tooBig", path: json.path, message: `${tooDeepMessage(JSON_MAX_DEPTH)} (${jsonErrorText(json)})` },
        ],
      };
    return {
      ok: false,
      issues: [{ code: "invalidJson", path: [], message: `Not valid JSON: ${jsonErrorText(json)}.` }],
    };
  }
  const parsed = parseSnapshot(json.value, { plainJson: true });
  if (!parsed.ok) return { ok: false, issues: parsed.issues };
  return { ok: true, snapshot: parsed.value, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Loads `path` on this thread: readSnapshotFile, then compile. */
export async function loadSnapshotFile(path: string): Promise<LoadedSnapshot> {
  const read = await readSnapshotFile(path);
  return read.ok ? { ok: true, engine: new Engine(read.snapshot), sha256: read.sha256 } : read;
}

/** The worker script next to this module once built (dist/snapshot-worker.js), or null when absent (running from source). */
export function defaultWorkerFile(): string | null {
  const file = fileURLToPath(new URL("./snapshot-worker.js", import.meta.url));
  return existsSync(file) ? file : null;
}

/**
 * A validated snapshot as JSON slices: the object with every top-level array emptied (`rest`), and
 * each of those arrays as the JSON of consecutive slices of SNAPSHOT_SLICE elements, in order — or
 * `null` for a slice whose hash the receiver already knows (it keeps that slice's objects).
 */
export interface SnapshotSlices {
  readonly rest: string;
  readonly arrays: readonly (readonly [string, readonly (string | null)[]])[];
  /** Per top-level array, each slice's hash: what the receiver passes as `known` next time. */
  readonly hashes: SliceHashes;
}

/** Per top-level array, the hash of each of its slices' JSON. */
export type SliceHashes = readonly (readonly [string, readonly string[]])[];

/**
 * The snapshot of `slices`, parsed one slice at a time with a yield to the event loop after each,
 * so that no single step blocks requests for longer than the parse of one slice.
 */
export async function parseSnapshotSlices(slices: SnapshotSlices): Promise<SystemSnapshot> {
  const snapshot = JSON.parse(slices.rest) as Record<string, unknown>;
  for (const [key, parts] of slices.arrays) {
    const all: unknown[] = [];
    for (const part of parts) {
      if (part === null) throw new Error(`slice of ${key} missing: a first load must carry every slice`);
      await yieldToEventLoop();
      for (const item of JSON.parse(part) as unknown[]) all.push(item);
    }
    snapshot[key] = all;
  }
  return snapshot as unknown as SystemSnapshot;
}

/** Elements per JSON slice of a top-level array (see snapshotWorker.ts). */
export const SNAPSHOT_SLICE = 1000;

/** An immer-style patch path (`[collection, position]`), as Engine.update reads it. */
export interface PositionPatch {
  readonly op: "replace";
  readonly path: readonly [string, number];
}

/**
 * The snapshot of `slices` (read with `known` = the hashes of `prev`'s slices), reusing the elements
 * of `prev` for every slice the worker left out as unchanged, so that unchanged entities keep their
 * objects; a yield to the event loop after each slice parsed. Returns the patches (one per position
 * of every changed slice) with which Engine.update recompiles only those, or `patches: null` when
 * something outside the arrays changed (the system zone, say), which only a full compile handles.
 */
export async function parseSnapshotSlicesAgainst(
  slices: SnapshotSlices,
  prevRest: string,
  prev: SystemSnapshot,
): Promise<{ snapshot: SystemSnapshot; patches: PositionPatch[] | null }> {
  const snapshot = JSON.parse(slices.rest) as Record<string, unknown>;
  const patches: PositionPatch[] = [];
  const whole = slices.rest !== prevRest;
  for (const [key, parts] of slices.arrays) {
    const oldItems = (prev as unknown as Record<string, unknown>)[key] as unknown[] | undefined;
    const all: unknown[] = [];
    for (let k = 0; k < parts.length; k++) {
      const part = parts[k]!;
      if (part === null) {
        // Unchanged slice: the very objects of the previous snapshot, which was sliced the same way.
        if (oldItems === undefined)
          throw new Error(`slice ${k} of ${key} was left out, but the previous snapshot has no ${key}`);
        const from = k * SNAPSHOT_SLICE;
        const to = Math.min(from + SNAPSHOT_SLICE, oldItems.length);
        for (let i = from; i < to; i++) all.push(oldItems[i]);
        continue;
      }
      await yieldToEventLoop();
      const from = all.length;
      for (const item of JSON.parse(part) as unknown[]) all.push(item);
      for (let i = from; i < all.length; i++) patches.push({ op: "replace", path: [key, i] });
    }
    snapshot[key] = all;
  }
  return { snapshot: snapshot as unknown as SystemSnapshot, patches: whole ? null : patches };
}

/** A validated snapshot from the worker, as JSON slices still to be parsed (on the caller's thread). */
/** What the snapshot worker (snapshotWorker.ts) posts back: every problem, or the normalized snapshot in JSON slices with the file's SHA-256. */
export type WorkerAnswer =
  | { readonly ok: false; readonly issues: readonly { code: string; path: (string | number)[]; message: string }[] }
  | { readonly ok: true; readonly sha256: string; readonly slices: SnapshotSlices };

export type WorkerRead =
  | { readonly ok: true; readonly sha256: string; readonly slices: SnapshotSlices }
  | { readonly ok: false; readonly issues: readonly Issue[] };

/**
 * readSnapshotFile in a worker thread (`workerFile`, the built snapshotWorker.ts): reading, JSON
 * parsing and validation, the bulk of a reload, never block this thread. A worker that fails
 * (crash, out of memory) is reported as one issue.
 * @param signal - aborting it stops the worker (a server closing does not wait for its reload).
 */
export function readSnapshotFileInWorker(
  path: string,
  workerFile: string,
  signal?: AbortSignal,
  known?: SliceHashes,
): Promise<WorkerRead> {
  return new Promise((resolvePromise) => {
    let settled = false;
    const settle = (r: WorkerRead) => {
      if (settled) return;
      settled = true;
      resolvePromise(r);
    };
    const failed = (what: string) =>
      settle({ ok: false, issues: [{ code: "unreadable", path: [], message: `The reload worker failed: ${what}.` }] });
    const worker = new Worker(workerFile, { workerData: { path, known: known ?? null } });
    const stop = () => void worker.terminate();
    signal?.addEventListener("abort", stop, { once: true });
    worker.once("exit", () => signal?.removeEventListener("abort", stop));
    worker.once("message", (m: WorkerAnswer) => settle(m.ok ? m : { ok: false, issues: m.issues as readonly Issue[] }));
    worker.once("error", (e) => failed(e.message));
    worker.once("exit", (code) => failed(`exit code ${code}`));
  });
}

/** A macrotask boundary: requests that arrived meanwhile are answered before the caller goes on. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
