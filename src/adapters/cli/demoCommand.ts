import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { DateTime } from "luxon";
import type { Decision } from "../../model/index.js";
import { parseInstant } from "../../model/index.js";
import { parseJson } from "../jsonSyntax.js";
import { CliError, type CliIo, readTextFile } from "./io.js";
import { loadSystemFile } from "./loadSystem.js";

interface DemoRequest {
  deviceId: string;
  at: string | number;
  note?: string;
  pin?: string;
  credential?: Record<string, unknown>;
  node?: { online: boolean };
}

export interface DemoOptions {
  readonly system?: string;
  readonly requests?: string;
}

/** The bundled examples folder: next to dist/ in the package, or at the repo root from src/. */
export function examplesDir(): string {
  for (const rel of ["../examples/", "../../../examples/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}building.json`)) return dir;
  }
  throw new CliError("cannot find the bundled examples folder");
}

/** `rsop demo`: the bundled scans, each with the local time, who, where, and the decision's reason. */
export async function demoCommand(opts: DemoOptions, io: CliIo): Promise<number> {
  const dir = opts.system === undefined || opts.requests === undefined ? examplesDir() : "";
  const systemPath = opts.system ?? `${dir}building.json`;
  const requestsPath = opts.requests ?? `${dir}requests.jsonl`;
  const engine = await loadSystemFile(systemPath, io);
  const snap = engine.snapshot;
  const devices = new Map(snap.devices.map((d) => [d.id, d]));
  const nodes = new Map(snap.cloudNodes.map((n) => [n.id, n]));
  const holders = new Map(snap.holders.map((h) => [h.id, h]));
  const rules = new Map(snap.rules.map((r) => [r.id, r]));
  const text = await readTextFile(requestsPath);
  // Every line is checked before the first is shown: a broken file is a clear error (exit 1).
  const reqs: DemoRequest[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const r = parseJson(line);
    if (!r.ok)
      throw new CliError(
        `requests file "${requestsPath}", line ${i + 1}: invalid JSON at column ${r.column}: ${r.message}`,
      );
    if (typeof r.value !== "object" || r.value === null || Array.isArray(r.value))
      throw new CliError(`requests file "${requestsPath}", line ${i + 1}: a request is a JSON object`);
    reqs.push(r.value as DemoRequest);
  });
  const w = (s: string) => io.stdout.write(`${s}\n`);
  w(
    `Example building ${snap.systemId}: ${snap.cloudNodes.map((n) => `${n.name} (${n.timezone})`).join(", ")}; ${snap.holders.length} holders, ${snap.devices.length} devices, ${snap.rules.length} rules.`,
  );
  w("");
  reqs.forEach((req, i) => {
    const d: Decision = engine.decide(req);
    const dev = devices.get(req.deviceId);
    const node = dev === undefined ? undefined : nodes.get(dev.cloudNode);
    const at = parseInstant(req.at);
    const local = Number.isNaN(at)
      ? String(req.at)
      : DateTime.fromMillis(at, { zone: node?.timezone ?? snap.timezone }).toFormat("ccc yyyy-LL-dd HH:mm:ss ZZ");
    const h = d.holderId === null ? undefined : holders.get(d.holderId);
    const who = h === undefined ? describeCredential(req) : `${h.firstName} ${h.lastName}`;
    const rule = d.activeRuleId === null ? "" : ` · rule "${rules.get(d.activeRuleId)?.name ?? d.activeRuleId}"`;
    const extras = [
      d.floors.length > 0 ? `floors ${d.floors.map((f) => devices.get(f)?.name ?? f).join(", ")}` : "",
      d.duress ? "DURESS" : "",
      req.node !== undefined && !req.node.online ? "node offline" : "",
    ].filter((s) => s !== "");
    w(`${String(i + 1).padStart(2)}. ${req.note ?? ""}`.trimEnd());
    w(`    ${local} · ${dev?.name ?? req.deviceId}${node ? ` (${node.name})` : ""} · ${who}`);
    w(`    → ${d.outcome.toUpperCase()} (${d.reason})${rule}${extras.length > 0 ? ` · ${extras.join(" · ")}` : ""}`);
  });
  // An RSOP: the first demo holder's resultant access at the first scan's instant.
  const first = reqs[0];
  const subject = snap.holders[0];
  if (first !== undefined && subject !== undefined && !Number.isNaN(parseInstant(first.at))) {
    const rsop = engine.rsop([subject.id], { at: first.at });
    const h = rsop.holders[0]!;
    w("");
    w(
      `RSOP of ${subject.firstName} ${subject.lastName} (${h.id}) at ${rsop.date}: groups ${h.groups.map((g) => g.name).join(", ")}`,
    );
    for (const d of h.devices)
      w(
        `    ${d.allowed ? "open  " : "closed"} ${d.name} (${d.cloudNode.name})${d.activeRuleId === null ? "" : ` · rule "${rules.get(d.activeRuleId)?.name ?? d.activeRuleId}"`}`,
      );
    for (const fg of h.floorGroups)
      w(
        `    ${fg.allowed ? "open  " : "closed"} floors "${fg.name}" from ${fg.readerPort.name}${fg.activeRuleId === null ? "" : ` · rule "${rules.get(fg.activeRuleId)?.name ?? fg.activeRuleId}"`}`,
      );
    w(
      `    ${h.rules.filter((r) => r.active).length} of ${h.rules.length} rules active now (system zone ${snap.timezone}).`,
    );
  }
  return 0;
}

function describeCredential(req: { pin?: string; credential?: Record<string, unknown> }): string {
  const c = req.credential;
  if (c === undefined) return req.pin !== undefined ? "PIN only" : "nothing presented";
  if (typeof c.wiegand === "string") return `${c.wiegand.length}-bit Wiegand read`;
  if (c.credentialNumber !== undefined) return `card ${String(c.facilityCode ?? "-")}/${String(c.credentialNumber)}`;
  return `${String(c.mobile)} credential ${String(c.credentialId)}`;
}

/** Registers `rsop demo`. */
export function registerDemoCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command("demo")
    .description("Run the demo scans against the bundled example building and print the decisions with their reasons.")
    .option("--system <file>", "snapshot to use instead of the bundled example")
    .option("--requests <file>", "JSON Lines requests to use instead of the bundled ones")
    .action(async (opts: { system?: string; requests?: string }) => {
      setCode(await demoCommand(opts, io));
    });
}
