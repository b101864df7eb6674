// Reads a JSON request body with a byte limit: Content-Length is checked first, and the bytes are
// counted while reading as well, because a client may send no Content-Length (chunked) or a wrong one.
// A request that Node's http server received is read from its IncomingMessage directly when the
// server registered it (nodeRequests.ts): the web stream of its Request costs more than deciding it.
import { formatPath } from "../../model/index.js";
import { JSON_MAX_DEPTH, tooDeepMessage } from "../../model/plainCopy.js";
import { jsonErrorText, parseJson } from "../jsonSyntax.js";
import { HttpError } from "../../service/httpError.js";
import { type NodeBody, nodeBodyOf } from "./nodeRequests.js";

/** `application/json` or any `application/…+json`, parameters (charset) ignored: JSON is UTF-8. */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `The request body is larger than ${maxBytes} bytes.`);
}

/** The message of a body that stopped arriving: the client closed the connection (or the server's request timeout did). */
export const BODY_CUT_OFF = "The request body ended before it was complete (the connection was closed).";

/** The chunks of a body and their total size; throws as readJsonBody does for a body over the bound or cut off. */
interface Chunks {
  readonly chunks: Uint8Array[];
  readonly size: number;
}

async function readStream(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Chunks> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body === null) return { chunks, size };
  const reader = body.getReader();
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      throw new HttpError(400, BODY_CUT_OFF);
    }
    const { done, value } = chunk;
    if (done) return { chunks, size };
    size += value.byteLength;
    if (size > maxBytes) {
      // Stop reading at once: the rest of an oversized body is never buffered.
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
}

/** readStream on the IncomingMessage itself: the same bound, the same answers. */
function readNode(incoming: NodeBody, maxBytes: number): Promise<Chunks> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const settle = (error: HttpError | null) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onCut);
      incoming.off("close", onCut);
      if (error === null) resolve({ chunks, size });
      else reject(error);
    };
    const onData = (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // Stop reading at once: the rest of an oversized body is never buffered (the server drains or
      // closes the connection once the answer is out).
      incoming.pause();
      settle(tooLarge(maxBytes));
    };
    const onEnd = () => settle(null);
    // The connection closed (the client, or the request timeout): cut off unless the whole body
    // arrived and was handed over before it closed.
    const onCut = () =>
      settle(incoming.complete && incoming.readableLength === 0 ? null : new HttpError(400, BODY_CUT_OFF));
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onCut);
    incoming.on("close", onCut);
  });
}

/** One decoder for every body: without `stream`, each decode starts afresh. */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The bytes of a request's body, at most `maxBytes`: refused by its Content-Length before reading,
 * else reading stops at the bound, so the rest of an oversized body is never buffered. Every body
 * reader of the servers (JSON, forms) reads through it.
 * @throws HttpError 413 (over `maxBytes`), 400 (cut off: BODY_CUT_OFF).
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^[0-9]+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes)
    throw tooLarge(maxBytes);
  // A body read or closed before (no such reader here) is left to its web stream, which knows its state.
  const incoming = nodeBodyOf(request);
  const { chunks, size } =
    incoming !== undefined && !incoming.readableDidRead && !incoming.destroyed
      ? await readNode(incoming, maxBytes)
      : await readStream(request.body, maxBytes);
  if (chunks.length === 1) return chunks[0]!;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/**
 * The parsed JSON body of a request.
 * @throws HttpError 415 (not JSON), 413 (over `maxBytes`), 400 (empty, cut off, not UTF-8, not JSON:
 *   with the line and column of the first error, never quoting the body, which may hold a PIN; nested
 *   deeper than JSON_MAX_DEPTH: also the path of the first value too deep, HJ1).
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  if (!isJsonContentType(request.headers.get("content-type")))
    throw new HttpError(415, 'The request body must be JSON, sent with "Content-Type: application/json".');
  const bytes = await readBodyBytes(request, maxBytes);
  if (bytes.byteLength === 0) throw new HttpError(400, "The request body is empty.");
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new HttpError(400, "The request body is not valid UTF-8.");
  }
  const parsed = parseJson(text);
  if (parsed.ok) return parsed.value;
  // Too deep (HJ1): refused before anything walks the value, with the path of the first value too deep.
  if (parsed.path !== undefined)
    throw new HttpError(400, `The request body is nested too deeply: ${jsonErrorText(parsed)}.`, [
      { path: formatPath(parsed.path), message: tooDeepMessage(JSON_MAX_DEPTH) },
    ]);
  // One issue at `body` (every 400 names where its problem is): the position and what was expected, never the text.
  throw new HttpError(400, `The request body is not valid JSON: ${jsonErrorText(parsed)}.`, [
    { path: "body", message: `Is not valid JSON: at line ${parsed.line}, column ${parsed.column}, ${parsed.message}.` },
  ]);
}
