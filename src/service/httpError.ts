// Error answers of the HTTP adapter: one JSON shape for every status, never a stack trace.
import { type Issue, formatPath } from "../model/index.js";

/** One problem of an HTTP request: where (a body path like `[2].credential.wiegand`, or a parameter) and what. */
export interface HttpIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * The body of every error answer: `{ "error": { "status", "message", "issues": [{ "path", "message" }] } }`.
 * Its shape is part of the HTTP API: every error answer has exactly these fields.
 */
export interface HttpErrorBody {
  readonly error: {
    readonly status: number;
    readonly message: string;
    readonly issues: readonly HttpIssue[];
  };
}

/** Raised inside the handler for an expected failure; the handler turns it into a JSON answer. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly status: number,
    message: string,
    readonly issues: readonly HttpIssue[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** Most problems one error answer lists; the message gives the full count when there are more. */
export const MAX_ISSUES = 100;

/** `"Invalid access requests. 350000 problems; the first 100 are listed."` */
export function tooManyIssuesMessage(message: string, listed: number, count: number): string {
  return `${message} ${count} problems; the first ${listed} are listed.`;
}

/** Model issues as HTTP issues; `prefix` places them inside a larger body (e.g. `[2]` of a batch). */
export function toHttpIssues(issues: readonly Issue[], prefix: readonly (string | number)[] = []): HttpIssue[] {
  return issues.map((i) => ({ path: formatPath([...prefix, ...i.path]), message: i.message }));
}

/** Headers every answer carries: JSON, not sniffable, never cached (access answers go stale). */
export function baseHeaders(extra: Readonly<Record<string, string>>): Headers {
  const h = new Headers(extra);
  h.set("content-type", "application/json; charset=utf-8");
  h.set("cache-control", "no-store");
  h.set("x-content-type-options", "nosniff");
  return h;
}

/** A JSON answer; `indent` 0 is compact, otherwise pretty-printed with a final newline. */
export function jsonResponse(
  status: number,
  body: unknown,
  indent: number,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return textResponse(status, jsonText(body, indent), headers);
}

/** The JSON text of an answer: `indent` 0 is compact, otherwise pretty-printed with a final newline. */
export function jsonText(body: unknown, indent: number): string {
  return indent > 0 ? `${JSON.stringify(body, null, indent)}\n` : JSON.stringify(body);
}

/** jsonText's answer from the bytes of `JSON.stringify(body, null, indent)`: a final newline added when indented. */
export function jsonTextBytes(json: Uint8Array, indent: number): Uint8Array {
  if (indent <= 0) return json;
  const text = new Uint8Array(json.length + 1);
  text.set(json);
  text[json.length] = 0x0a;
  return text;
}

/** An answer whose body is JSON already made (jsonText, or its UTF-8 bytes), with the headers of every JSON answer. */
export function textResponse(
  status: number,
  text: string | Uint8Array,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(text, { status, headers: baseHeaders(headers) });
}

/** Characters of a sliced answer encoded per read of its body. */
const SLICE_CHARS = 1 << 20;

/**
 * A long text answered in slices of about a MiB, each encoded only when the connection takes it, so
 * that a 20 MB report view never holds the event loop for the whole encoding (RP17). A slice never
 * ends between the two halves of a surrogate pair.
 */
export function slicedTextResponse(status: number, text: string): Response {
  if (text.length <= SLICE_CHARS) return textResponse(status, text);
  const encoder = new TextEncoder();
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= text.length) {
        controller.close();
        return;
      }
      let end = Math.min(text.length, at + SLICE_CHARS);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      controller.enqueue(encoder.encode(text.slice(at, end)));
      at = end;
    },
  });
  return new Response(body, { status, headers: baseHeaders({}) });
}

/** The JSON answer of an HttpError; at most MAX_ISSUES problems are listed, the message counts the rest. */
export function errorResponse(e: HttpError, indent: number): Response {
  const capped = e.issues.length > MAX_ISSUES;
  const issues = capped ? e.issues.slice(0, MAX_ISSUES) : e.issues;
  const message = capped ? tooManyIssuesMessage(e.message, MAX_ISSUES, e.issues.length) : e.message;
  const body: HttpErrorBody = { error: { status: e.status, message, issues } };
  return jsonResponse(e.status, body, indent, e.headers);
}

/**
 * The HTTP error of a QueryError from an engine query: 404 when every problem is an unknown id
 * (each named), else 400. `rename` maps the engine's option names to the route's parameter names.
 */
export function queryHttpError(issues: readonly Issue[], rename: Readonly<Record<string, string>>): HttpError {
  const mapped = issues.map((i) => {
    const [head, ...rest] = i.path;
    const name = typeof head === "string" && rename[head] !== undefined ? rename[head]! : head;
    return { path: formatPath(name === undefined ? [] : [name, ...rest]), message: i.message };
  });
  const allUnknown = issues.every((i) => i.code === "unknownId");
  if (allUnknown) return new HttpError(404, issues.length === 1 ? "Unknown id." : "Unknown ids.", mapped);
  return new HttpError(400, "Invalid query.", mapped);
}
