// What the Node servers (listenOn) tell the web-standard pipeline about a request they received from
// Node's http server, and how they write an answer made for such a request. Going through a web
// Request's body stream and a web Response's body stream cost several times what deciding a request
// does; a registered request's body is read from its IncomingMessage (readJsonBody), and a route may
// answer it with a TextAnswer, whose text the server writes itself. Everything else stays web-standard:
// a request nobody registered (another runtime, a test calling the app) is read and answered as before.
// No Node module is imported here: the web-standard handler imports this module.
import { baseHeaders, jsonResponse, jsonText } from "../../service/httpError.js";

/** The request as Node's http server received it (an IncomingMessage): only what reading needs. */
export interface NodeBody {
  /** Whether the whole message arrived (then a connection closed afterwards cut nothing off). */
  readonly complete: boolean;
  /** Bytes received and not yet emitted as data. */
  readonly readableLength: number;
  readonly destroyed: boolean;
  readonly errored: unknown;
  readonly readableDidRead: boolean;
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end" | "error" | "close", listener: () => void): unknown;
  off(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  off(event: "end" | "error" | "close", listener: () => void): unknown;
  pause(): unknown;
}

/** Where a server writes an answer (a ServerResponse): only what writing a TextAnswer needs. */
export interface NodeOutgoing {
  /** Set once the connection closed. */
  readonly destroyed: boolean;
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string | Uint8Array): unknown;
}

/** The Node objects of a registered request. */
interface NodeIo {
  readonly incoming: NodeBody;
  readonly outgoing: NodeOutgoing;
}

/**
 * Where a registered request keeps its NodeIo: a property of the request itself, not a WeakMap
 * entry (the young-generation GC keeps a WeakMap's entries alive, so every request would reach the
 * old generation and be collected only by a full GC).
 */
const NODE_IO = Symbol("rsop.nodeIo");

type Registered = Request & { [NODE_IO]?: NodeIo };

/** Tells the pipeline the IncomingMessage and ServerResponse of `request` (listenOn, for each request). */
export function registerNodeRequest(request: Request, incoming: NodeBody, outgoing: NodeOutgoing): void {
  (request as Registered)[NODE_IO] = { incoming, outgoing };
}

function nodeIoOf(request: Request): NodeIo | undefined {
  return (request as Registered)[NODE_IO];
}

/**
 * The same request at another URL (the service hands a panel's `/panels/S/api/…` to the panel's app
 * as `/api/…`): same method, headers and signal; a registered request keeps its Node objects (its
 * body is read from them), any other passes its body stream on.
 */
export function requestAt(request: Request, url: string): Request {
  const io = nodeIoOf(request);
  const init: RequestInit & { duplex?: "half" } = {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
  };
  if (io === undefined && request.body !== null && request.method !== "GET" && request.method !== "HEAD") {
    init.body = request.body;
    init.duplex = "half";
  }
  const next = new Request(url, init);
  if (io !== undefined) (next as Registered)[NODE_IO] = io;
  return next;
}

/** The IncomingMessage of a registered request; undefined for any other. */
export function nodeBodyOf(request: Request): NodeBody | undefined {
  return nodeIoOf(request)?.incoming;
}

/**
 * Whether the connection of `request` closed before its answer (its signal is aborted). The signal
 * is asked only once a registered request's connection shows it closed (@hono/node-server aborts
 * it then): making it costs more than the rest of a log line.
 */
export function closedBeforeAnswer(request: Request): boolean {
  const io = nodeIoOf(request);
  if (io !== undefined && !io.outgoing.destroyed && io.incoming.errored == null) return false;
  return request.signal.aborted;
}

/** The headers of every JSON answer (baseHeaders), as @hono/node-server writes a Response's: by name. */
const JSON_HEADERS: Readonly<Record<string, string>> = Object.fromEntries(baseHeaders({}));

/**
 * A JSON answer the server writes itself (writeTo): its status, its text and the headers of every
 * JSON answer, and no web Response underneath until something reads it as one. It is a Response to
 * `instanceof`, and its headers are a Headers made on first use (a replica sets one); any other
 * member (body, text(), json(), clone() …) is the member of the same answer made as an ordinary
 * Response then. Made only for a registered request (jsonAnswer): a runtime other than Node's
 * servers here would read a Response's internal state, which this has none of.
 */
export class TextAnswer {
  readonly status: number;
  readonly #text: string;
  #headers: Headers | undefined;
  #full: Response | undefined;

  constructor(status: number, text: string) {
    this.status = status;
    this.#text = text;
  }

  get headers(): Headers {
    this.#headers ??= new Headers(JSON_HEADERS);
    return this.#headers;
  }

  /** The same answer as an ordinary Response (made once, on first use). */
  full(): Response {
    this.#full ??= new Response(this.#text, { status: this.status, headers: this.headers });
    return this.#full;
  }

  /**
   * Writes the answer to `outgoing` as @hono/node-server writes a Response with a body: its headers
   * in their order, then Content-Length (`byteLength` of the text: the server's, Buffer.byteLength),
   * then the body.
   */
  writeTo(outgoing: NodeOutgoing, byteLength: (text: string) => number): void {
    const headers: Record<string, string | number> = this.#headers === undefined ? { ...JSON_HEADERS } : {};
    if (this.#headers !== undefined) for (const [k, v] of this.#headers) headers[k] = v;
    headers["content-length"] ??= byteLength(this.#text);
    outgoing.writeHead(this.status, headers);
    outgoing.end(this.#text);
  }
}

// A Response to `instanceof`; every member of Response other than status and headers is the full
// Response's (accessors read it, methods are called on it).
Object.setPrototypeOf(TextAnswer.prototype, Response.prototype);
for (const name of Object.getOwnPropertyNames(Response.prototype)) {
  if (name === "constructor" || Object.hasOwn(TextAnswer.prototype, name) || name === "status") continue;
  const member = Object.getOwnPropertyDescriptor(Response.prototype, name)!;
  Object.defineProperty(
    TextAnswer.prototype,
    name,
    typeof member.value === "function"
      ? {
          value(this: TextAnswer, ...args: unknown[]) {
            return (this.full() as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
          },
        }
      : {
          get(this: TextAnswer) {
            return (this.full() as unknown as Record<string, unknown>)[name];
          },
        },
  );
}

/**
 * A JSON answer to `request`: a TextAnswer when a Node server registered the request, else the
 * ordinary Response (jsonResponse); the same status, headers and text either way.
 */
export function jsonAnswer(request: Request, status: number, body: unknown, indent: number): Response {
  if (nodeIoOf(request) === undefined) return jsonResponse(status, body, indent);
  return new TextAnswer(status, jsonText(body, indent)) as unknown as Response;
}
