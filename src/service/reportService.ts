// Holder reports (the 2.0 systems API, `/{system_id}/reports/holders/…`) and 1.0 people reports (the 1.0 panel API
// §4, `/api/reports/cloudpeople/…`) of `rsop serve --data`: preview, generate (answered at once, built
// off the request path), metadata, list, view, delete, and the 1.0 zipped export files. Reports are
// kept in the store beside the system (Store.putReport …), so they outlive a restart.
import { randomUUID } from "node:crypto";
import {
  EXPORT_TYPES,
  type ExportType,
  csvHeader,
  csvRows,
  htmlEnd,
  htmlRows,
  htmlStart,
  PREVIEW_LIMIT,
  type ReportFlavour,
  type ReportQuery,
  type ReportRecord,
  exportReport,
  parseReportBody,
  recordMaker,
  reportRecords,
  selectHolders,
} from "../reports/index.js";
import type { Issue, SystemSnapshot } from "../model/index.js";
import type { Store } from "./store/store.js";
import type { Grant } from "./auth/grant.js";
import { pageHeaders } from "./pageHeaders.js";
import { HttpError, jsonResponse, slicedTextResponse, toHttpIssues } from "./httpError.js";
import { columnsFor, recordsFor, reportQueryFor } from "./reportSecrets.js";

/** The 2.0 systems API / the 1.0 panel API: the states of a report. */
export type ReportStatus = "pending" | "finished" | "finishedTruncated";

/** The 2.0 systems API "Report metadata" (the 1.0 panel API "People report metadata": integer id, no `report`). */
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
  /** The bytes of its stored records (their JSON text, as a view answers it); absent before they are stored. */
  readonly bytes?: number;
}

/** The stored report caps and the generation bound of a report service (RP16, RP17). */
export type ReportStoreLimits = Pick<ReportServiceOptions, "maxReports" | "maxReportBytes" | "maxGenerating">;

export interface ReportServiceOptions {
  readonly store: Store;
  readonly flavour: ReportFlavour;
  /** The clock of startTime / finishedTime. */
  readonly now: () => number;
  /** A generated report keeps at most this many records, then ends `finishedTruncated` (RP9); default 1,000,000. */
  readonly maxEntries?: number;
  /** Most reports stored at once (pending ones included); a new one first removes the oldest finished (RP16). Default 100. */
  readonly maxReports?: number;
  /**
   * Most bytes of records stored at once, all reports together; a finishing report first removes the
   * oldest finished others, and one that alone would pass it ends `finishedTruncated` (RP16). Default 256 MiB.
   */
  readonly maxReportBytes?: number;
  /** Most reports being generated at once; another generate is answered 429 (RP17). Default 2. */
  readonly maxGenerating?: number;
  /** Told about a report that could not be stored. */
  readonly onError?: (e: unknown) => void;
  readonly indent: number;
}

/** Records are built this many at a time, yielding to the event loop between chunks. */
const CHUNK = 2000;
/** The defaults of maxReports, maxReportBytes and maxGenerating (RP16, RP17). */
export const REPORT_STORE_DEFAULTS = { maxReports: 100, maxReportBytes: 256 * 1024 * 1024, maxGenerating: 2 } as const;
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
  /** generate requests between their check of the generation bound and the start of their build. */
  #starting = 0;

  private constructor(opts: ReportServiceOptions) {
    this.#opts = opts;
  }

  /**
   * Loads the stored reports. A report still `pending` in the store was cut off by a stop of the
   * server: it ends `finishedTruncated` now, with the records it had (none) (RP11).
   */
  static async open(opts: ReportServiceOptions): Promise<ReportService> {
    for (const k of ["maxEntries", "maxReports", "maxReportBytes", "maxGenerating"] as const) {
      const v = opts[k];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
        throw new RangeError(`ReportService: ${k} must be a positive integer, got ${String(v)}`);
    }
    const service = new ReportService(opts);
    for (const r of await opts.store.listReports()) {
      let info = r.info as ReportInfo;
      if (info.metadata.status === "pending") {
        const at = iso(opts.now());
        info = {
          ...info,
          metadata: {
            ...info.metadata,
            status: "finishedTruncated",
            finishedTime: at,
            truncatedAt: at,
            entriesCount: 0,
            size: sizes([], info.metadata.output, opts.flavour),
          },
        };
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
      if (mine === undefined || mine.metadata.status !== "pending" || info.metadata.status !== "pending")
        this.#infos.set(r.id, info);
      if (typeof info.metadata.id === "number") this.#nextInt = Math.max(this.#nextInt, info.metadata.id + 1);
    }
    for (const id of [...this.#infos.keys()])
      if (!ids.has(id) && this.#infos.get(id)!.metadata.status !== "pending") this.#infos.delete(id);
  }

  /** Whether a report is being generated (the tenant host keeps such a tenant loaded, T32). */
  get generating(): boolean {
    return this.#running.size > 0 || this.#starting > 0;
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
      return {
        filters: m.filters,
        output: m.output,
        ...(info.partition !== null ? { partition: info.partition } : {}),
      };
    };
  }

  #parse(snapshot: SystemSnapshot, body: unknown, grant: Grant): ReportQuery {
    const q = parseReportBody(body, { snapshot, flavour: this.#opts.flavour, templates: this.#templates(grant) });
    if (!q.ok) throw refusedBody(q.issues);
    return reportQueryFor(q.value, body, grant);
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
    const generating = this.#opts.maxGenerating ?? REPORT_STORE_DEFAULTS.maxGenerating;
    if (this.#running.size + this.#starting >= generating)
      throw new HttpError(
        429,
        `${generating} reports are being generated, the most at once (the report generation bound); try again shortly.`,
        [],
        { "retry-after": "1" },
      );
    // The slot is taken before the first await, so that concurrent requests cannot all pass the check.
    this.#starting++;
    try {
      return await this.#start(snapshot, body, q, grant, timezone);
    } finally {
      this.#starting--;
    }
  }

  /** generate, once a generation slot is taken: room made, the metadata stored pending, the build started. */
  async #start(
    snapshot: SystemSnapshot,
    body: unknown,
    q: ReportQuery,
    grant: Grant,
    timezone: string,
  ): Promise<Response> {
    await this.#roomForOneMore();
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
        ? {
            report:
              template === null
                ? null
                : {
                    id: template.metadata.id,
                    name: null,
                    partition: template.partition === null ? null : String(template.partition),
                  },
          }
        : {}),
    };
    const info: ReportInfo = {
      metadata,
      scope,
      partition: template !== null ? template.partition : ((raw.partition as string | number | undefined) ?? null),
    };
    await this.#opts.store.putReport(key, info);
    this.#infos.set(key, info);
    const run = this.#build(key, snapshot, q).finally(() => this.#running.delete(run));
    this.#running.add(run);
    return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  }

  /**
   * Builds a report's records a chunk per event-loop turn, with their JSON text (as a view answers it)
   * and export sizes counted chunk by chunk, so no step holds the loop for the whole report. It ends
   * `finishedTruncated` at maxEntries records, at maxReportBytes bytes, or when processing fails.
   */
  async #build(key: string, snapshot: SystemSnapshot, q: ReportQuery): Promise<void> {
    const flavour = this.#opts.flavour;
    const max = this.#opts.maxEntries ?? 1_000_000;
    const maxBytes = this.#opts.maxReportBytes ?? REPORT_STORE_DEFAULTS.maxReportBytes;
    const text = new RecordsText(q.output, flavour, this.#opts.indent);
    let failed = false;
    const fail = (e: unknown) => {
      failed = true;
      this.#opts.onError?.(e);
    };
    await nextTick(); // never on the request's own turn
    try {
      const holders = selectHolders(snapshot, q, flavour);
      const make = recordMaker(snapshot, flavour, q.output);
      for (let from = 0; from < holders.length && !failed; from += CHUNK) {
        await nextTick();
        if (!this.#infos.has(key)) return; // deleted while pending
        const chunk: ReportRecord[] = [];
        try {
          for (let i = from; i < Math.min(from + CHUNK, holders.length) && !failed; i++)
            if (text.count + chunk.length >= max) failed = true;
            else chunk.push(make(holders[i]!));
        } catch (e) {
          fail(e); // the records made before the error are kept (RP9)
        }
        if (!text.add(chunk, maxBytes)) failed = true;
      }
    } catch (e) {
      fail(e);
    }
    await nextTick();
    const at = iso(this.#opts.now());
    const current = this.#infos.get(key);
    if (current === undefined) return;
    const records = text.json();
    const done: ReportInfo = {
      ...current,
      bytes: Buffer.byteLength(records),
      metadata: {
        ...current.metadata,
        status: failed ? "finishedTruncated" : "finished",
        finishedTime: at,
        truncatedAt: failed ? at : null,
        entriesCount: text.count,
        size: text.sizes(),
      },
    };
    try {
      await this.#roomForBytes(key, done.bytes!);
      await this.#opts.store.putReport(key, done, records);
      if (this.#infos.has(key)) this.#infos.set(key, done);
    } catch (e) {
      // The store is closing (or failing): the report stays pending there and ends finishedTruncated at the next start (RP11).
      this.#opts.onError?.(e);
    }
  }

  /** The stored bytes of a report's records (one stored before they were counted: its JSON export's size). */
  #bytesOf(info: ReportInfo): number {
    return info.bytes ?? info.metadata.size?.json ?? 0;
  }

  /** Removes the oldest finished report but `keep`; false when there is none. */
  async #removeOldestFinished(keep?: string): Promise<boolean> {
    for (const [id, info] of this.#infos)
      if (id !== keep && info.metadata.status !== "pending") {
        await this.#opts.store.deleteReport(id);
        this.#infos.delete(id);
        return true;
      }
    return false;
  }

  /** Makes room for one more report under maxReports, removing the oldest finished ones; 409 when all are pending (RP16). */
  async #roomForOneMore(): Promise<void> {
    const most = this.#opts.maxReports ?? REPORT_STORE_DEFAULTS.maxReports;
    while (this.#infos.size >= most)
      if (!(await this.#removeOldestFinished()))
        throw new HttpError(
          409,
          `${this.#infos.size} reports are stored, the most at once (the stored report bound), and none is finished: delete one, or wait for one to finish.`,
        );
  }

  /** Makes room for `bytes` more under maxReportBytes, removing the oldest finished reports but `key` (RP16). */
  async #roomForBytes(key: string, bytes: number): Promise<void> {
    const most = this.#opts.maxReportBytes ?? REPORT_STORE_DEFAULTS.maxReportBytes;
    const stored = () => [...this.#infos].reduce((sum, [id, info]) => sum + (id === key ? 0 : this.#bytesOf(info)), 0);
    while (stored() + bytes > most && (await this.#removeOldestFinished(key)));
  }

  /** GET …/requests: metadata, newest first, a page at a time (the accounts API). */
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
      throw new HttpError(409, "The report is still being generated.", [
        {
          path: "report_id",
          message: `Report "${String(info.metadata.id)}" is pending: ask its metadata until its status is finished.`,
        },
      ]);
    return ((await this.#opts.store.reportRecords(String(info.metadata.id))) ?? []) as ReportRecord[];
  }

  /** GET …/requests/{id}/view: the records (409 while pending, RP12). */
  async view(id: string, grant: Grant): Promise<Response> {
    const info = this.#find(id, grant);
    // Stored as the very text of this answer (RecordsText): answered as it is, never parsed and
    // printed again on the event loop — unless PIN columns must be left out for this token.
    const read = this.#opts.store.reportRecordsText;
    if (
      info.bytes !== undefined &&
      read !== undefined &&
      info.metadata.status !== "pending" &&
      columnsFor(info.metadata.output, grant).length === info.metadata.output.length
    ) {
      const text = await read.call(this.#opts.store, id);
      if (text !== null) return slicedTextResponse(200, text);
    }
    return jsonResponse(200, recordsFor(await this.#records(this.#find(id, grant)), grant), this.#opts.indent);
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
    const notFound = () =>
      new HttpError(404, "Not found.", [
        {
          path: "filename",
          message: `No report file is named "${name}": use {links}.{csv|html|json}.zip of a report's metadata.`,
        },
      ]);
    if (m === null) throw notFound();
    const info = [...this.#infos.values()].find((i) => i.metadata.links === m[1] && this.#visible(i, grant));
    if (info === undefined) throw notFound();
    const records = recordsFor(await this.#records(info), grant);
    const type = m[2] as ExportType;
    const columns = columnsFor(
      info.metadata.output.map((k) => (k === "Custom Attributes" ? "Custom Fields" : k)),
      grant,
    );
    const text = exportReport(type, records, columns, { title: `People report ${String(info.metadata.id)}` });
    const { zipOneFile } = await import("./zipFile.js");
    const zip = zipOneFile(
      `${m[1]}.${type}`,
      new TextEncoder().encode(text),
      new Date(info.metadata.finishedTime ?? this.#opts.now()),
    );
    return new Response(zip, {
      status: 200,
      headers: {
        "content-type": "application/zip",
        "content-disposition": `attachment; filename="${name}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  }
}

/**
 * A report's records as the JSON text a view answers (`jsonText` of the array), and the byte sizes of
 * its three exports, added a chunk at a time: each chunk costs time linear in its own records only.
 */
class RecordsText {
  readonly #parts: string[] = [];
  readonly #columns: string[];
  readonly #indent: number;
  count = 0;
  /** The bytes of json() so far (its brackets and line breaks included). */
  #bytes: number;
  #csv: number;
  #html: number;
  #json = 2;

  constructor(output: readonly string[], flavour: ReportFlavour, indent: number) {
    this.#columns = [...output];
    this.#indent = indent;
    this.#bytes = indent > 0 ? 3 : 1;
    this.#csv = Buffer.byteLength(csvHeader(this.#columns));
    this.#html = Buffer.byteLength(
      htmlStart(this.#columns, { title: flavour === "people" ? "People report" : "Holder report" }),
    );
  }

  /** Adds the records of the chunk while the text stays within `maxBytes`; false when one did not fit. */
  add(all: readonly ReportRecord[], maxBytes: number): boolean {
    const pad = " ".repeat(this.#indent);
    let fits = 0;
    for (const r of all) {
      // An element of JSON.stringify(array, null, indent): the record's own text, one level deeper (JSON
      // strings hold no raw line break, so every line break is the layout's).
      const part =
        this.#indent > 0 ? pad + JSON.stringify(r, null, this.#indent).replace(/\n/g, `\n${pad}`) : JSON.stringify(r);
      const bytes = Buffer.byteLength(part) + (this.#indent > 0 ? 2 : 1);
      if (this.#bytes + bytes > maxBytes) break;
      this.#parts.push(part);
      this.#bytes += bytes;
      fits++;
    }
    const chunk = fits === all.length ? all : all.slice(0, fits);
    this.count += chunk.length;
    this.#csv += Buffer.byteLength(csvRows(chunk, this.#columns));
    this.#html += Buffer.byteLength(htmlRows(chunk, this.#columns));
    for (const r of chunk) this.#json += Buffer.byteLength(JSON.stringify(r)) + 1;
    return fits === all.length;
  }

  /** The JSON text of every record added, as `jsonText(records, indent)` would make it. */
  json(): string {
    if (this.#parts.length === 0) return this.#indent > 0 ? "[]\n" : "[]";
    return this.#indent > 0 ? `[\n${this.#parts.join(",\n")}\n]\n` : `[${this.#parts.join(",")}]`;
  }

  /** The byte sizes of the csv, html and json exports of every record added. */
  sizes(): { csv: number; html: number; json: number } {
    return {
      csv: this.#csv,
      html: this.#html + Buffer.byteLength(htmlEnd(this.count)),
      json: this.count === 0 ? 2 : this.#json - 1,
    };
  }
}

/** The byte sizes of the three exports of these records. */
function sizes(
  records: readonly ReportRecord[],
  output: readonly string[],
  flavour: ReportFlavour,
): { csv: number; html: number; json: number } {
  const columns = output.map((k) => (flavour === "people" && k === "Custom Attributes" ? "Custom Fields" : k));
  const size = (type: ExportType) =>
    Buffer.byteLength(
      exportReport(type, records, columns, { title: flavour === "people" ? "People report" : "Holder report" }),
      "utf8",
    );
  const [csv, html, json] = EXPORT_TYPES.map(size) as [number, number, number];
  return { csv, html, json };
}

/** A whole-number query parameter within [min, max] (absent: the default), else 400 at `query.<key>`. */
function whole(url: URL, key: string, dflt: number, min: number, max: number): number {
  const raw = url.searchParams.get(key);
  if (raw === null || raw === "") return dflt;
  if (!/^[0-9]{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new HttpError(400, "The request is invalid.", [
      { path: `query.${key}`, message: `Must be a whole number from ${min} to ${max}.` },
    ]);
  return Number(raw);
}
