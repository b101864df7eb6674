// Every answer a test receives, checked against the server's own /openapi.json: the status is one
// the route declares, and the JSON body matches that status's schema (ajv, JSON Schema 2020-12, as
// OpenAPI 3.1 uses it). A request no route documents must be answered in the error shape.
//
// Answers are checked when the test finishes (a failure then fails the test), so that reading the
// document or validating a large answer never delays the reads a hostile-load test times.
import Ajv2020 from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import { onTestFinished } from "vitest";

/** Checks waiting for the end of the running test. */
let pending: (() => Promise<void>)[] | null = null;

function later(check: () => Promise<void>): void {
  if (pending === null) {
    const mine: (() => Promise<void>)[] = [];
    try {
      onTestFinished(async () => {
        if (pending === mine) pending = null;
        for (const c of mine) await c();
      });
    } catch {
      // Outside a test (a helper's setup): checked at once.
      void check();
      return;
    }
    pending = mine;
  }
  pending.push(check);
}

interface Doc {
  readonly paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
}

interface Checker {
  readonly doc: Doc;
  readonly ajv: Ajv2020;
  readonly compiled: Map<string, ValidateFunction>;
  readonly templates: { path: string; re: RegExp; literal: number }[];
}

const documents = new Map<string, Promise<Doc | null>>();
const checkers = new Map<Promise<Doc | null>, Promise<Checker | null>>();

/** The document at `docUrl`, read once (and again when `fresh`). */
function documentOf(docUrl: string, fresh = false): Promise<Doc | null> {
  let d = documents.get(docUrl);
  if (d === undefined || fresh) {
    d = (async () => {
      try {
        const res = await fetch(docUrl, { signal: AbortSignal.timeout(20_000) });
        return res.status === 200 ? ((await res.json()) as Doc) : null;
      } catch {
        // The server is not there (a test that killed it): the request itself shows that.
        return null;
      }
    })();
    documents.set(docUrl, d);
  }
  return d;
}

/** Starts reading a server's document while it is up (the checks run when the test finishes). */
export function prefetchDocument(docUrl: string): void {
  void documentOf(docUrl);
}

async function checkerOf(docUrl: string, fresh = false): Promise<Checker | null> {
  const d = documentOf(docUrl, fresh);
  let c = checkers.get(d);
  if (c === undefined) {
    c = d.then((doc) => {
      if (doc === null) return null;
      const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
      ajv.addSchema(doc as object, "openapi");
      const templates = Object.keys(doc.paths).map((path) => ({
        path,
        re: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
        literal: path.split("/").filter((s) => s !== "" && !s.startsWith("{")).length,
      }));
      return { doc, ajv, compiled: new Map(), templates };
    });
    checkers.set(d, c);
  }
  return c;
}

const pointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

function validatorOf(c: Checker, ref: string): ValidateFunction {
  let v = c.compiled.get(ref);
  if (v === undefined) {
    v = c.ajv.compile({ $ref: `openapi#${ref}` });
    c.compiled.set(ref, v);
  }
  return v;
}

/**
 * Checks one answer against the document of the server at `docUrl` (its `/openapi.json`) when the
 * test finishes; the test then fails with the route, the status and ajv's errors on a mismatch. The
 * body is read then too (`readBody`), so that a test timing its own requests does not pay for
 * reading and parsing the copy of a large answer while it runs.
 */
export function checkAnswerLater(
  docUrl: string,
  method: string,
  url: string,
  status: number,
  readBody: () => Promise<unknown>,
  contentType: string | null,
): void {
  prefetchDocument(docUrl);
  later(async () => checkAnswerNow(docUrl, method, url, status, await readBody(), contentType));
}

/** Checks one answer at once (throws on a mismatch): what checkAnswerLater runs when the test finishes. */
export async function checkAnswerNow(
  docUrl: string,
  method: string,
  url: string,
  status: number,
  body: unknown,
  contentType: string | null,
): Promise<void> {
  const pathname = new URL(url).pathname;
  let c = await checkerOf(docUrl);
  if (c === null) return;
  // A server that swapped its app (a completed migration) documents other routes: read it again.
  if (!c.templates.some((t) => t.re.test(pathname) && c!.doc.paths[t.path]?.[method.toLowerCase()] !== undefined)) {
    c = await checkerOf(docUrl, true);
    if (c === null) return;
  }
  const checker = c;
  const m = method.toLowerCase();
  const matching = c.templates.filter((t) => t.re.test(pathname) && c.doc.paths[t.path]?.[m] !== undefined);
  const top = Math.max(-1, ...matching.map((t) => t.literal));
  const best = matching.find((t) => t.literal === top);
  const json = contentType?.startsWith("application/json") === true;
  if (best === undefined && status < 400) {
    // A system a migration staged is served below its id with a document of its own there.
    const staged = `${new URL(docUrl).origin}/${pathname.split("/")[1]}/openapi.json`;
    if (staged !== docUrl && (await documentOf(staged)) !== null)
      return checkAnswerNow(staged, method, url, status, body, contentType);
  }
  if (best === undefined) {
    // No route for this method and path: a refusal in the error shape.
    if (status < 400) throw new Error(`${method} ${pathname}: ${status}, but no route in /openapi.json has it`);
    if (json && body !== undefined) {
      const v = validatorOf(checker, "/components/schemas/Error");
      if (!v(body))
        throw new Error(`${method} ${pathname} ${status}: not the error shape: ${checker.ajv.errorsText(v.errors)}`);
    }
    return;
  }
  const responses = c.doc.paths[best.path]![m]!.responses;
  const declared = responses[String(status)];
  if (declared === undefined)
    throw new Error(
      `${method} ${best.path}: status ${status} is not declared in /openapi.json (declared: ${Object.keys(responses).join(", ")})`,
    );
  if (!json || body === undefined) return;
  if (declared.content?.["application/json"] === undefined)
    throw new Error(`${method} ${best.path} ${status}: a JSON body, but the document declares none`);
  const ref = `/paths/${pointer(best.path)}/${m}/responses/${status}/content/application~1json/schema`;
  const v = validatorOf(checker, ref);
  if (!v(body))
    throw new Error(
      `${method} ${best.path} ${status}: the answer does not match /openapi.json: ${checker.ajv.errorsText(v.errors)}`,
    );
}
