// The 1.0 panel API "Preview import" (`POST /api/persons/import/preview`): what importing a CSV of people
// into one partition of a 1.0 panel would do — how many people it would create, update and delete,
// and which rows it cannot place on its own (conflicts) — without changing anything. Executing an
// import is not shown in the seed, so nothing here writes. Semantics: docs/semantics.md LP12.
import { parse } from "csv-parse/sync";
import { z } from "zod";
import { type Issue, fromZodIssues, holderSchema, zodMessage } from "../../model/index.js";
import type { PanelSnapshot } from "../panelSchema.js";
import { objectBody, parseBody } from "../../live/body.js";
import { Refusal } from "../../live/operation.js";

/** A row the import cannot place on its own, and the existing people it could be. */
export interface ImportConflict {
  /** The row's first line in the CSV text (the header is line 1). */
  readonly line: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly matches: readonly { readonly id: number; readonly firstName: string; readonly lastName: string }[];
}

/** The answer of an import preview (the 1.0 panel API). */
export interface ImportPreview {
  readonly toBeCreated: number;
  readonly toBeUpdated: number;
  readonly toBeDeleted: number;
  readonly conflicts: readonly ImportConflict[];
}

/** The CSV columns an import reads: the person fields a row can give. Others are refused. */
export const IMPORT_COLUMNS = [
  "id",
  "firstName",
  "lastName",
  "email",
  "enabled",
  "activeDate",
  "expireDate",
  "pin",
  "duressPin",
] as const;
type Column = (typeof IMPORT_COLUMNS)[number];

const body = z.strictObject({
  csv: z.string(),
  partition: z.number().int().min(0).optional(),
  upsert: z.boolean().optional(),
});

/** One cell as the person field it gives: empty cells give null (or leave the field out). */
function cellValue(column: Column, cell: string): unknown {
  const text = cell.trim();
  if (column === "enabled")
    return text === "" ? true : text.toLowerCase() === "true" ? true : text.toLowerCase() === "false" ? false : text;
  if (column === "firstName" || column === "lastName") return cell;
  return text === "" ? null : text;
}

/** A stored name as text (the panel schema keeps names it does not type). */
const text = (x: unknown): string => (typeof x === "string" ? x : "");
const key = (firstName: unknown, lastName: unknown) =>
  `${text(firstName).trim().toLowerCase()}\u0000${text(lastName).trim().toLowerCase()}`;

/**
 * The preview of importing `body.csv` into `body.partition` (default 0) of `panel`.
 * @throws Refusal 400 with every problem: the body's shape, an unknown partition, a CSV that does not
 *   parse, unknown or repeated columns, missing name columns, and every bad cell (at
 *   `body.csv.<line>.<column>`), and an `id` that names no person of the partition.
 */
export function previewPersonImport(panel: PanelSnapshot, input: unknown): ImportPreview {
  const b = parseBody(body, objectBody(input));
  const partition = b.partition ?? 0;
  const upsert = b.upsert ?? false;
  if (!panel.partitions.some((p) => p.id === partition))
    throw new Refusal(400, [
      { code: "unknownReference", path: ["body", "partition"], message: `No partition has id ${partition}.` },
    ]);

  const [header, ...data] = parseCsv(b.csv);
  const columns = headerColumns(header);
  const issues: Issue[] = [];

  const people = panel.persons.filter((p) => p.partition === partition);
  const byId = new Map(people.map((p) => [p.id, p]));
  const byName = new Map<string, (typeof people)[number][]>();
  for (const p of people) {
    const k = key(p.firstName, p.lastName);
    const list = byName.get(k);
    if (list === undefined) byName.set(k, [p]);
    else list.push(p);
  }

  let toBeCreated = 0;
  let toBeUpdated = 0;
  const conflicts: ImportConflict[] = [];
  const matched = new Set<number>();
  for (const row of data) {
    const checked = readRow(row, columns, issues);
    if (checked === null) continue;
    const { line, id, firstName, lastName } = checked;
    if (id !== undefined) {
      const existing = byId.get(id);
      if (existing === undefined) {
        issues.push({
          code: "unknownReference",
          path: ["body", "csv", line, "id"],
          message: `No person of partition ${partition} has id ${id}.`,
        });
        continue;
      }
      if (!upsert || matched.has(id))
        conflicts.push({
          line,
          firstName,
          lastName,
          matches: [{ id, firstName: text(existing.firstName), lastName: text(existing.lastName) }],
        });
      else {
        matched.add(id);
        toBeUpdated++;
      }
      continue;
    }
    // By name: no one of that name is a new person; with upsert, the one person of that name (not
    // already taken by an earlier row) is updated; anything else needs a person to decide.
    const same = byName.get(key(firstName, lastName)) ?? [];
    if (same.length === 0) toBeCreated++;
    else if (upsert && same.length === 1 && !matched.has(same[0]!.id)) {
      matched.add(same[0]!.id);
      toBeUpdated++;
    } else
      conflicts.push({
        line,
        firstName,
        lastName,
        matches: same.map((p) => ({ id: p.id, firstName: text(p.firstName), lastName: text(p.lastName) })),
      });
  }
  if (issues.length > 0) throw new Refusal(400, issues.slice(0, 100));
  // With upsert, the partition's people that no row names would go; without it, the import only adds.
  const toBeDeleted = upsert
    ? people.filter((p) => !matched.has(p.id) && !conflicts.some((c) => c.matches.some((m) => m.id === p.id))).length
    : 0;
  return { toBeCreated, toBeUpdated, toBeDeleted, conflicts };
}

type CsvRow = { record: string[]; info: { lines: number } };

/** The CSV's rows, each with the line it ends on; a CSV that does not parse is refused. */
function parseCsv(csv: string): CsvRow[] {
  try {
    return parse(csv, {
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
      bom: true,
    }) as unknown as CsvRow[];
  } catch (e) {
    const line = (e as { lines?: number }).lines;
    throw new Refusal(400, [
      {
        code: "invalid",
        path: ["body", "csv"],
        message: `Is not valid CSV${typeof line === "number" ? ` (line ${line})` : ""}: ${String((e as Error).message).slice(0, 200)}`,
      },
    ]);
  }
}

/** The header's column names: known, each once, firstName and lastName among them; else refused. */
function headerColumns(header: CsvRow | undefined): string[] {
  if (header === undefined)
    throw new Refusal(400, [
      {
        code: "required",
        path: ["body", "csv"],
        message: "Must start with a header line naming the columns (firstName, lastName, …).",
      },
    ]);
  const issues: Issue[] = [];
  const columns = header.record.map((name) => name.trim());
  columns.forEach((name, i) => {
    if (!(IMPORT_COLUMNS as readonly string[]).includes(name))
      issues.push({
        code: "unknownField",
        path: ["body", "csv", 1, i],
        message: `Unknown column "${name.slice(0, 40)}"; the columns are ${IMPORT_COLUMNS.join(", ")}.`,
      });
    else if (columns.indexOf(name) !== i)
      issues.push({ code: "invalid", path: ["body", "csv", 1, i], message: `Column "${name}" is given twice.` });
  });
  for (const required of ["firstName", "lastName"])
    if (!columns.includes(required))
      issues.push({ code: "required", path: ["body", "csv", 1], message: `The header names no "${required}" column.` });
  if (issues.length > 0) throw new Refusal(400, issues);
  return columns;
}

/** A row read as a person's fields, checked by the holder schema both architectures share; null (and its problems) when refused. */
function readRow(
  row: CsvRow,
  columns: readonly string[],
  issues: Issue[],
): { line: number; id: number | undefined; firstName: string; lastName: string } | null {
  // The row's first line: its last line less the line breaks inside its cells.
  const line = row.info.lines - row.record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
  // A row is checked as a person's fields are: by the holder schema both architectures share.
  const person: Record<string, unknown> = { id: "row" };
  let id: number | undefined;
  columns.forEach((name, i) => {
    const cell = row.record[i] ?? "";
    if (name === "id") {
      if (cell.trim() === "") return;
      if (!/^\d{1,15}$/.test(cell.trim()))
        issues.push({
          code: "invalidType",
          path: ["body", "csv", line, "id"],
          message: "Must be a person id (a whole number) or empty.",
        });
      else id = Number(cell.trim());
    } else {
      const value = cellValue(name as Column, cell);
      if (value !== null) person[name] = value;
    }
  });
  if (row.record.length > columns.length)
    issues.push({
      code: "invalid",
      path: ["body", "csv", line],
      message: `Has ${row.record.length} cells; the header names ${columns.length} columns.`,
    });
  const checked = holderSchema.safeParse(person, { error: zodMessage });
  if (!checked.success) {
    issues.push(...fromZodIssues(checked.error.issues, ["body", "csv", line]));
    return null;
  }
  return { line, id, firstName: text(checked.data.firstName), lastName: text(checked.data.lastName) };
}
