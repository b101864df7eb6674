// Holder reports (seed 001 §4, `/{system_id}/reports/holders/…`) and 1.0 people reports (seed 002
// §4, `/api/reports/cloudpeople/…`) of `rsop serve --data`: preview, generate (answered at once, built
// off the request path), metadata, list, view, delete, and the 1.0 zipped export files. Reports are
// kept in the store beside the system (Store.putReport …), so they outlive a restart.
import { randomUUID } from "node:crypto";
import {
  EXPORT_TYPES,
  type ExportType,
  PREVIEW_LIMIT,
  type ReportFlavour,
  type ReportQuery,
  type ReportRecord,
  exportReport,
  parseReportBody,
  recordMaker,
  reportRecords,
  selectHolders,
} from "../../live/reports/index.js";
import type { Issue, SystemSnapshot } from "../../model/index.js";
import type { Store } from "../store/store.js";
import type { Grant } from "./grant.js";
import { pageHeaders } from "./answerDeviceAccess.js";
import { HttpError, jsonResponse, toHttpIssues } from "./httpError.js";

/** seed 001 §3 / seed 002 §3: the states of a report. */
export type ReportStatus = "pending" | "finished" | "finishedTruncated";

/** seed 001 §2 "Report metadata" (seed 002 §2 "People report metadata": integer id, no `report`). */
export interface ReportMetadata {
  id: string | number;
  status: ReportStatus;
  startTime: string;
  finishedTime: string | null;
  truncatedAt: string | null;
  timezone: string;
  size: { csv: number; html: number; json: number } | null;
  entriesCount: number | null;
  creator: string;
  filters: unknown[];
  links: string;
  output: string[];
  report?: { id: string | number; name: string | null; partition: string | null } | null;
}

/** What the service keeps of a report (Store `info`): its metadata and what only the service needs. */
interface ReportInfo {
  readonly metadata: ReportMetadata;
  /** The partitions of the token that made it (null: every partition); who else may see it (RP10). */
  readonly scope: readonly string[] | null;
  /** The body's partition, as sent (a template passes it on). */
  readonly partition: string | number | null;
}

export interface ReportServiceOptions {
  readonly store: Store;
  readonly flavour: ReportFlavour;
  /** The clock of startTime / finishedTime. */
  readonly now: () => number;
  /** A generated report keeps at most this many records, then ends `finishedTruncated` (RP9); default 1,000,000. */
  readonly maxEntries?: number;
  /** Told about a report that could not be stored. */
  readonly onError?: (e: unknown) => void;
  readonly indent: number;
}

/** Records are built this many at a time, yielding to the event loop between chunks. */
const CHUNK = 2000;
const iso = (ms: number) => new Date(ms).toISOString();
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The `output` list of the metadata as a body would send it (1.0 names custom fields "Custom Attributes"). */
function outputNames(query: ReportQuery, flavour: ReportFlavour): string[] {
  return query.output.map((k) => (flavour === "people" && k === "Custom Fields" ? "Custom Attributes" : k));
}

function refusedBody(issues: readonly Issue[]): HttpError {
  return new HttpError(400, "The report body is invalid.", toHttpIssues(issues, ["body"]));
}

/** The reports of one served system or panel. */
export class ReportService {
  readonly #infos = new Map<string, ReportInfo>();
  readonly #opts: ReportServiceOptions;
  #nextInt = 1;
  /** Reports being generated: their promise, so a test or a shutdown can wait for them. */
  readonly #running = new Set<Promise<void>>();

  private constructor(opts: ReportServiceOptions) {
    this.#opts = opts;
  }

  /**
   * Loads the stored reports. A report still `pending` in the store was cut off by a stop of the
   * server: it ends `finishedTruncated` now, with the records it had (none) (RP11).
   */
  static async open(opts: ReportServiceOptions): Promise<ReportService> {
    const service = new ReportService(opts);
    for (const r of await opts.store.listReports()) {
      let info = r.info as ReportInfo;
      if (info.metadata.status === "pending") {
        const at = iso(opts.now());
        info = { ...info, metadata: { ...info.metadata, status: "finishedTruncated", finishedTime: at, truncatedAt: at, entriesCount: 0, size: sizes([], info.metadata.output, opts.flavour) } };
        await opts.store.putReport(r.id, info, []);
      }
      service.#infos.set(r.id, info);
      if (typeof info.metadata.id === "number") service.#nextInt = Math.max(service.#nextInt, info.metadata.id + 1);
    }
    return service;
  }

  /**
   * Reads the reports the store holds again: ones another process (a replica on the same database)
   * made or finished appear, ones it deleted go; a report this process is still building keeps its
   * own state.
   */
  async refresh(): Promise<void> {
    const stored = await this.#opts.store.listReports();
    const ids = new Set<string>();
    for (const r of stored) {
      ids.add(r.id);
      const info = r.info as ReportInfo;
      const mine = this.#infos.get(r.id);
      if (mine === undefined || mine.metadata.status !== "pending" || info.metadata.status !== "pending") this.#infos.set(r.id, info);
      if (typeof info.metadata.id === "number") this.#nextInt = Math.max(this.#nextInt, info.metadata.id + 1);
    }
    for (const id of [...this.#infos.keys()]) if (!ids.has(id) && this.#infos.get(id)!.metadata.status !== "pending") this.#infos.delete(id);
  }

  /** Waits for every report being generated. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  #visible(info: ReportInfo, grant: Grant): boolean {
    if (grant.partitions === null) return true;
    return info.scope !== null && info.scope.every((p) => grant.partitions!.has(p));
  }

  #find(rawId: string, grant: Grant): ReportInfo {
    const info = this.#infos.get(rawId);
    if (info === undefined || !this.#visible(info, grant))
      throw new HttpError(404, "Not found.", [{ path: "report_id", message: `No report has id "${rawId}".` }]);
    return info;
  }

  /** A template (`reportId`) the grant may see, as the body it stands for. */
  #templates(grant: Grant): (id: string | number) => unknown {
    return (id) => {
      const info = this.#infos.get(String(id));
      if (info === undefined || !this.#visible(info, grant)) return undefined;
      const m = info.metadata;
      return { filters: m.filters, output: m.output, ...(info.partition !== null ? { partition: info.partition } : {}) };
    };
  }

  #parse(snapshot: SystemSnapshot, body: unknown, grant: Grant): ReportQuery {
    const q = parseReportBody(body, { snapshot, flavour: this.#opts.flavour, templates: this.#templates(grant) });
    if (!q.ok) throw refusedBody(q.issues);
    return q.value;
  }

  /** POST …/preview: at most 50 records, nothing stored. */
  preview(snapshot: SystemSnapshot, body: unknown, grant: Grant): Response {
    const q = this.#parse(snapshot, body, grant);
    return jsonResponse(200, reportRecords(snapshot, q, this.#opts.flavour, PREVIEW_LIMIT), this.#opts.indent);
  }

  /**
   * POST …/generate: the metadata is stored `pending` before the answer (204); the records are built
   * after it, a chunk per event-loop turn, then stored with the metadata `finished` — or
   * `finishedTruncated` with `truncatedAt` when processing fails or reaches maxEntries.
   */
  async generate(snapshot: SystemSnapshot, body: unknown, grant: Grant, timezone: string): Promise<Response> {
    const q = this.#parse(snapshot, body, grant);
    const flavour = this.#opts.flavour;
    const raw = (body ?? {}) as Record<string, unknown>;
    const id = flavour === "people" ? this.#nextInt++ : randomUUID();
    const key = String(id);
    const template = q.reportId === null ? null : this.#infos.get(String(q.reportId))!;
    const scope = grant.partitions === null ? null : [...grant.partitions].sort();
    const metadata: ReportMetadata = {
      id,
      status: "pending",
      startTime: iso(this.#opts.now()),
      finishedTime: null,
      truncatedAt: null,
      timezone,
      size: null,
      entriesCount: null,
      creator: grant.partitions === null ? grant.role : `${grant.role} (${scope!.join(", ")})`,
      filters: template !== null ? template.metadata.filters : Array.isArray(raw.filters) ? raw.filters : [],
      links: `${flavour === "people" ? "people" : "holder"}-report-${key}`,
      output: outputNames(q, flavour),
      ...(flavour === "holders"
        ? { report: template === null ? null : { id: template.metadata.id, name: null, partition: template.partition === null ? null : String(template.partition) } }
        : {}),
    };
    const info: ReportInfo = { metadata, scope, partition: template !== null ? template.partition : ((raw.partition as string | number | undefined) ?? null) };
    await this.#opts.store.putReport(key, info);
    this.#infos.set(key, info);
    const run = this.#build(key, snapshot, q).finally(() => this.#running.delete(run));
    this.#running.add(run);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  }

  async #build(key: string, snapshot: SystemSnapshot, q: ReportQuery): Promise<void> {
    const flavour = this.#opts.flavour;
    const max = this.#opts.maxEntries ?? 1_000_000;
    const records: ReportRecord[] = [];
    let failed = false;
    await nextTick(); // never on the request's own turn
    try {
      const holders = selectHolders(snapshot, q, flavour);
      const make = recordMaker(snapshot, flavour, q.output);
      for (let i = 0; i < holders.length; i++) {
        if (records.length >= max) {
          failed = true;
          break;
        }
        records.push(make(holders[i]!));
        if ((i + 1) % CHUNK === 0) {
          await nextTick();
          if (!this.#infos.has(key)) return; // deleted while pending
        }
      }
    } catch (e) {
      failed = true;
      this.#opts.onError?.(e);
    }
    const current = this.#infos.get(key);
    if (current === undefined) return;
    const at = iso(this.#opts.now());
    let size: ReportMetadata["size"];
    try {
      size = sizes(records, q.output, flavour);
    } catch (e) {
      failed = true;
      size = { csv: 0, html: 0, json: 0 };
      records.length = 0;
      this.#opts.onError?.(e);
    }
    const done: ReportInfo = {
      ...current,
      metadata: { ...current.metadata, status: failed ? "finishedTruncated" : "finished", finishedTime: at, truncatedAt: failed ? at : null, entriesCount: records.length, size },
    };
    try {
      await this.#opts.store.putReport(key, done, records);
      if (this.#infos.has(key)) this.#infos.set(key, done);
    } catch (e) {
      // The store is closing (or failing): the report stays pending there and ends finishedTruncated at the next start (RP11).
      this.#opts.onError?.(e);
    }
  }

  /** GET …/requests: metadata, newest first, a page at a time (seed 000 §4). */
  list(url: URL, grant: Grant): Response {
    const page = whole(url, "page", 0, 0, 1_000_000_000);
    const perPage = whole(url, "per_page", 10, 1, 100);
    const all = [...this.#infos.values()].filter((i) => this.#visible(i, grant)).reverse();
    const body = all.slice(page * perPage, page * perPage + perPage).map((i) => i.metadata);
    return jsonResponse(200, body, this.#opts.indent, pageHeaders(url, { page, perPage, total: all.length }));
  }

  /** GET …/requests/{id}. */
  metadata(id: string, grant: Grant): Response {
    return jsonResponse(200, this.#find(id, grant).metadata, this.#opts.indent);
  }

  async #records(info: ReportInfo): Promise<ReportRecord[]> {
    if (info.metadata.status === "pending")
      throw new HttpError(409, "The report is still being generated.", [{ path: "report_id", message: `Report "${String(info.metadata.id)}" is pending: ask its metadata until its status is finished.` }]);
    return ((await this.#opts.store.reportRecords(String(info.metadata.id))) ?? []) as ReportRecord[];
  }

  /** GET …/requests/{id}/view: the records (409 while pending, RP12). */
  async view(id: string, grant: Grant): Promise<Response> {
    return jsonResponse(200, await this.#records(this.#find(id, grant)), this.#opts.indent);
  }

  /** DELETE …/requests/{id}: 204; a pending report stops being generated. */
  async delete(id: string, grant: Grant): Promise<Response> {
    this.#find(id, grant);
    await this.#opts.store.deleteReport(id);
    this.#infos.delete(id);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  }

  /** GET /file/{filename}.{type}.zip (1.0): the export named by a report's `links`, zipped. */
  async file(name: string, grant: Grant): Promise<Response> {
    const m = /^(.+)\.(csv|html|json)\.zip$/.exec(name);
    const notFound = () => new HttpError(404, "Not found.", [{ path: "filename", message: `No report file is named "${name}": use {links}.{csv|html|json}.zip of a report's metadata.` }]);
    if (m === null) throw notFound();
    const info = [...this.#infos.values()].find((i) => i.metadata.links === m[1] && this.#visible(i, grant));
    if (info === undefined) throw notFound();
    const records = await this.#records(info);
    const type = m[2] as ExportType;
    const columns = info.metadata.output.map((k) => (k === "Custom Attributes" ? "Custom Fields" : k));
    const text = exportReport(type, records, columns, { title: `People report ${String(info.metadata.id)}` });
    const { zipOneFile } = await import("./zipFile.js");
    const zip = zipOneFile(`${m[1]}.${type}`, new TextEncoder().encode(text), new Date(info.metadata.finishedTime ?? this.#opts.now()));
    return new Response(zip, {
      status: 200,
      headers: { "content-type": "application/zip", "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store", "x-content-type-options": "nosniff" },
    });
  }
}

/** The byte sizes of the three exports of these records. */
function sizes(records: readonly ReportRecord[], output: readonly string[], flavour: ReportFlavour): { csv: number; html: number; json: number } {
  const columns = output.map((k) => (flavour === "people" && k === "Custom Attributes" ? "Custom Fields" : k));
  const size = (type: ExportType) => Buffer.byteLength(exportReport(type, records, columns, { title: flavour === "people" ? "People report" : "Holder report" }), "utf8");
  const [csv, html, json] = EXPORT_TYPES.map(size) as [number, number, number];
  return { csv, html, json };
}

/** A whole-number query parameter within [min, max] (absent: the default), else 400 at `query.<key>`. */
function whole(url: URL, key: string, dflt: number, min: number, max: number): number {
  const raw = url.searchParams.get(key);
  if (raw === null || raw === "") return dflt;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new HttpError(400, "The request is invalid.", [{ path: `query.${key}`, message: `Must be a whole number from ${min} to ${max}.` }]);
  return Number(raw);
}
