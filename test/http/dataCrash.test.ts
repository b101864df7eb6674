// Crash safety of `rsop serve --data`: the real executable in a child process, 16 clients writing at
// once, SIGKILL at a random moment. After a restart every acknowledged write is there, no write is
// there in part, the incrementally replayed system answers as a fresh load of its snapshot does, and
// SQLite's integrity check passes. A second process on the database is refused while the first runs.
import { spawnSync } from "node:child_process";
import { afterAll, expect, test } from "vitest";
import { buildCli, serveChild } from "../support/cliChild.js";
import { loadEngineOrThrow } from "../../src/evaluate/index.js";
import { SYSTEM_ID, caller, dataDir, inspect, startData } from "./dataSupport.js";
import { TOKEN, removeTempDirs } from "./fixtures.js";

afterAll(removeTempDirs);

const AT = "2026-04-15T12:00:00Z";
const CLIENTS = 16;

interface Acked {
  /** Holders whose create (with its card and group) was answered 201. */
  holders: Map<string, { number: number; group: string }>;
  /** Holders whose delete was answered 204. */
  deleted: Set<string>;
  /**
   * Holders whose delete was sent but not answered when the kill came: the server may have stored
   * it before it died, or not — either way is right, so such a holder may be there or not.
   */
  deleting: Set<string>;
  /** Groups whose create was answered 200. */
  groups: Set<string>;
}

test("SIGKILL during 16 concurrent writers: every acknowledged write (and every write a read showed) survives, none in part; decisions and RSOP equal a fresh load; integrity ok; a second process is refused", async () => {
  const cli = await buildCli("crash-test");
  const { db, system } = dataDir();
  // Small snapshot interval: the kill may land around a snapshot too.
  const { child, url, log } = await serveChild(cli, [
    "--data",
    db,
    "--system",
    system,
    "--snapshot-every",
    "25",
    "--port",
    "0",
  ]);
  expect(log()).toContain(`imported ${system} into ${db}: system ${SYSTEM_ID}`);

  // A second process on the same database is refused at once.
  const second = spawnSync(process.execPath, [cli, "serve", "--data", db, "--port", "0"], {
    env: { ...process.env, RSOP_TOKEN: TOKEN },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(second.stderr).toBe(
    `rsop: ${db} is in use by another process (another rsop serve?); only one process may serve a database at a time\n`,
  );
  expect(second.status).toBe(1);

  const acked: Acked = { holders: new Map(), deleted: new Set(), deleting: new Set(), groups: new Set() };
  const call = caller(url);
  let killed = false;
  let numbers = 100_000;
  async function client(k: number): Promise<void> {
    const mine: string[] = [];
    for (let i = 0; !killed; i++) {
      try {
        if (i % 5 === 4) {
          const r = await call("POST", "/groups", { name: `Crew ${k}-${i}` });
          if (r.status === 200) acked.groups.add(r.body.id);
          else throw new Error(`group create answered ${r.status}`);
        } else if (i % 7 === 6 && mine.length > 0) {
          const id = mine.shift()!;
          acked.deleting.add(id);
          const r = await call("DELETE", `/holders/${id}`);
          acked.deleting.delete(id);
          if (r.status === 204) acked.deleted.add(id);
          else throw new Error(`delete answered ${r.status}`);
        } else {
          const number = numbers++;
          const group = i % 2 === 0 ? "g-staff" : "g-night";
          const r = await call("POST", "/holders", {
            firstName: `C${k}`,
            lastName: `W${i}`,
            groups: [group],
            credentials: [{ types: ["card"], credentialNumber: number, facilityCode: 10 }],
          });
          if (r.status !== 201) throw new Error(`holder create answered ${r.status}: ${JSON.stringify(r.body)}`);
          acked.holders.set(r.body.id, { number, group });
          mine.push(r.body.id);
        }
      } catch (e) {
        if (killed) return; // the connection died with the server: that write's outcome is unknown
        throw e;
      }
    }
  }
  // Readers: a group a read has shown must have been committed (reads never see a write in progress).
  const seen = new Set<string>();
  async function reader(): Promise<void> {
    while (!killed) {
      try {
        const r = await call("GET", "/groups?search=Crew&per_page=100");
        for (const g of r.body as { id: string }[]) seen.add(g.id);
      } catch (e) {
        if (killed) return;
        throw e;
      }
    }
  }
  const clients = [...Array.from({ length: CLIENTS }, (_, k) => client(k)), reader(), reader()];
  // Writing for about 3 s: the kill comes at a random moment once every client has had time to
  // write (at least 64 holders acknowledged, however slow a busy machine makes the server).
  const started = performance.now();
  while ((acked.holders.size < 4 * CLIENTS || seen.size === 0) && performance.now() - started < 60_000)
    await new Promise((r) => setTimeout(r, 10));
  const killAfter = Math.floor(Math.random() * 2500);
  await new Promise((r) => setTimeout(r, killAfter));
  const exited = new Promise((r) => child.once("exit", r));
  killed = true; // from here on, a failed request is one the kill cut off
  child.kill("SIGKILL");
  await exited;
  await Promise.all(clients);
  const context = `killed ${killAfter} ms after the 64th acknowledged holder; ${acked.holders.size} holders, ${acked.deleted.size} deletes, ${acked.groups.size} groups acknowledged, ${acked.deleting.size} deletes cut off`;
  expect(acked.holders.size, context).toBeGreaterThan(CLIENTS);

  // Restart from the file (in-process): every acknowledged write is there.
  const again = await startData(db);
  const live = again.server.durable.target;
  if (live.kind !== "system") throw new Error("a system");
  const snapshot = live.live.snapshot;
  const holders = new Map(snapshot.holders.map((h) => [h.id, h]));
  for (const [id, { number, group }] of acked.holders) {
    if (acked.deleted.has(id)) {
      expect(holders.has(id), `${id} deleted (${context})`).toBe(false);
      continue;
    }
    // Its delete was cut off by the kill: stored or not, both are right (if there, it is whole, below).
    if (acked.deleting.has(id) && !holders.has(id)) continue;
    const h = holders.get(id);
    expect(h, `${id} acknowledged (${context})`).toBeDefined();
    expect(h!.groups, context).toEqual([group]);
    expect(
      h!.credentials.map((c) => c.credentialNumber),
      context,
    ).toEqual([number]);
  }
  const groupIds = new Set(snapshot.groups.map((g) => g.id));
  for (const id of acked.groups) expect(groupIds.has(id), `group ${id} (${context})`).toBe(true);
  expect(seen.size, context).toBeGreaterThan(0);
  for (const id of seen) expect(groupIds.has(id), `group ${id} was read (${context})`).toBe(true);
  // No write in part: every holder the clients created (acknowledged or not) has its card and group.
  for (const h of snapshot.holders.filter((x) => x.firstName.startsWith("C") && x.lastName.startsWith("W"))) {
    expect(h.credentials, `${h.id} (${context})`).toHaveLength(1);
    expect(h.groups, `${h.id} (${context})`).toHaveLength(1);
  }

  // The replayed, incrementally updated system answers as a fresh load of its snapshot.
  const fresh = loadEngineOrThrow(JSON.parse(JSON.stringify(snapshot)));
  const cards = snapshot.holders.flatMap((h) =>
    h.credentials
      .filter((c) => c.credentialNumber != null)
      .map((c) => ({ number: c.credentialNumber!, fc: c.facilityCode ?? undefined })),
  );
  const scans = cards.flatMap(({ number, fc }) =>
    ["d-front", "d-side", "d-lift"].map((deviceId) => ({
      deviceId,
      at: AT,
      credential: fc === undefined ? { credentialNumber: number } : { credentialNumber: number, facilityCode: fc },
    })),
  );
  const http = caller(again.server.url);
  const decided: { outcome: string }[] = [];
  for (let i = 0; i < scans.length; i += 1000) {
    const decisions = await http("POST", "/decisions", scans.slice(i, i + 1000));
    expect(decisions.status, JSON.stringify(decisions.body)).toBe(200);
    decided.push(...decisions.body);
  }
  expect(decided).toEqual(JSON.parse(JSON.stringify(scans.map((s) => fresh.decide(s)))));
  expect(decided.some((d) => d.outcome === "allowed")).toBe(true);
  const ids = snapshot.holders.map((h) => h.id);
  for (let i = 0; i < ids.length; i += 50) {
    const chunk = ids.slice(i, i + 50);
    const r = await http("GET", `/rsop/holders?ids=${chunk.join(",")}&at=${AT}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual(JSON.parse(JSON.stringify(fresh.rsop(chunk, { at: AT }))));
  }

  await again.server.close();
  const stored = inspect(db);
  expect(stored.integrity).toBe("ok");
  expect(stored.changes.map((c) => c.seq)).toEqual(stored.changes.map((_, i) => i + 1));
}, 120_000);
