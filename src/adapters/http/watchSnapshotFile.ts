// Tells when a snapshot file may have changed. The directory is watched rather than the file: an
// editor or a deploy tool that writes a new file and renames it over the old one (vim, `mv`,
// Kubernetes ConfigMap volumes swapping their `..data` link) replaces the inode, and a watch on the
// old inode would never fire again. Bursts of events (truncate, write, rename) are debounced into one call.
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";

/** A running watch. */
export interface SnapshotWatch {
  close(): void;
}

/**
 * Calls `onChange` once the events about `file` have been quiet for `debounceMs`.
 * @param onError - told when the watch itself fails (the directory vanished, …).
 */
export function watchSnapshotFile(
  file: string,
  debounceMs: number,
  onChange: () => void,
  onError: (e: Error) => void,
): SnapshotWatch {
  const full = resolve(file);
  const name = basename(full);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const fire = () => {
    timer = undefined;
    if (!closed) onChange();
  };
  const watcher: FSWatcher = watch(dirname(full), { persistent: false }, (_event, changed) => {
    // Our file, an unnamed event, or a `..data`-style link swap; other files in the directory are not ours.
    if (changed !== null && changed !== name && !changed.startsWith("..")) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(fire, debounceMs);
  });
  watcher.on("error", (e) => {
    if (!closed) onError(e);
  });
  return {
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      watcher.close();
    },
  };
}
