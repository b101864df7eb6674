// A cloud node's calls to its service (N13–N24 seen from the node): the snapshot, the change feed,
// heartbeats and event uploads, each under the node's own token, each bounded in time. Nothing here
// decides whether the node is online: the runtime does, from whether these calls succeed.

/** Where a node's service is and who the node is. */
export interface LinkOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080 (its systems host). */
  readonly service: string;
  readonly systemId: string;
  readonly nodeId: string;
  /** The node's token, from `POST /{system_id}/cloud-nodes/{id}/token`. */
  readonly token: string;
  /** How long one call may take before it counts as failed, ms; default 10,000. */
  readonly timeoutMs?: number;
}

/** A call that did not succeed: `status` is the service's answer, absent when none came. */
export class LinkError extends Error {
  override name = "LinkError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A body that is JSON text already. */
class RawJson {
  constructor(readonly json: string) {}
}

/** A feed that broke or fell silent after it opened: the node reconnects; no lost contact by itself (N59). */
class FeedBroke extends Error {
  override name = "FeedBroke";
}

/** One line of the change feed (N14, N16, N17). */
export type FeedLine =
  | { readonly revision: number; readonly time: string; readonly operation: unknown; readonly patches: unknown[] }
  | { readonly keepAlive: true; readonly revision: number }
  | { readonly error: { readonly status: number; readonly message: string } };

/** A heartbeat's body (N4–N9). */
export interface HeartbeatBody {
  readonly revision: number;
  readonly intervalSeconds?: number;
  readonly transfer?: boolean;
  readonly failure?: { readonly revision: number; readonly message: string } | null;
  readonly hardware?: readonly unknown[];
  readonly wireless?: readonly unknown[];
}

/** One access event of an upload (N21). */
export interface UploadEvent {
  readonly eventId: string;
  readonly occurredAt: string;
  readonly request: unknown;
  readonly decision: unknown;
}

/** The longest a feed may stay silent: the service sends a keep-alive every 15 s (N16). */
const FEED_SILENCE_MS = 40_000;

/** The message of a refusal, from the service's error shape, else its status. */
async function refusal(r: Response): Promise<LinkError> {
  let message = `${r.status} ${r.statusText}`;
  try {
    const body = (await r.json()) as { error?: { message?: unknown } };
    if (typeof body?.error?.message === "string") message = `${r.status}: ${body.error.message}`;
  } catch {
    // Not the service's JSON (a proxy's page): the status says enough.
  }
  return new LinkError(message, r.status);
}

/** The service's calls, as a node makes them. */
export class ServiceLink {
  readonly #base: string;
  readonly #auth: string;
  readonly #timeoutMs: number;

  constructor(options: LinkOptions) {
    const service = options.service.replace(/\/+$/, "");
    this.#base = `${service}/${encodeURIComponent(options.systemId)}/cloud-nodes/${encodeURIComponent(options.nodeId)}`;
    this.#auth = `Bearer ${options.token}`;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** The system's whole snapshot and the revision it is the state after (N13). */
  async snapshot(signal: AbortSignal): Promise<{ revision: number; snapshot: unknown }> {
    // A large system may take longer than one call's bound: the download gets six of them.
    const r = await this.#call("GET", "/node/snapshot", undefined, signal, this.#timeoutMs * 6);
    const body = (await r.json()) as { revision?: unknown; snapshot?: unknown };
    if (typeof body.revision !== "number" || typeof body.snapshot !== "object" || body.snapshot === null)
      throw new LinkError("the snapshot answer is not {revision, snapshot}");
    return { revision: body.revision, snapshot: body.snapshot };
  }

  /** Reports a heartbeat (N4); resolves on 204. */
  async heartbeat(body: HeartbeatBody, signal: AbortSignal): Promise<void> {
    const r = await this.#call("POST", "/node/heartbeat", body, signal);
    await r.body?.cancel();
  }

  /**
   * Uploads events in order (N20–N22); resolves once the service holds them durably. `events` may be
   * the body's JSON already (what a node's queue holds), so that it is not parsed only to be written again.
   */
  async upload(
    events: readonly UploadEvent[] | string,
    signal: AbortSignal,
  ): Promise<{ accepted: number; duplicates: number }> {
    const body = typeof events === "string" ? new RawJson(events) : { events };
    const r = await this.#call("POST", "/node/events", body, signal);
    return (await r.json()) as { accepted: number; duplicates: number };
  }

  /**
   * Follows the change feed after revision `from` (N14): each line handed to `onLine` in order, as
   * it arrives. Resolves when the feed ends: null when the service ended it, else why it broke or
   * fell silent past a missed keep-alive. Rejects (LinkError) when it can't be opened.
   */
  async follow(from: number, signal: AbortSignal, onLine: (line: FeedLine) => void): Promise<string | null> {
    // The feed's own signal: the call's bound covers its opening only, the stream lasts.
    const opening = new AbortController();
    const timer = setTimeout(() => opening.abort(new Error("no answer in time")), this.#timeoutMs);
    let r: Response;
    try {
      r = await this.#call(
        "GET",
        `/node/changes?from=${from}`,
        undefined,
        AbortSignal.any([signal, opening.signal]),
        null,
      );
    } finally {
      clearTimeout(timer);
    }
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await readWithin(reader, FEED_SILENCE_MS);
      } catch (e) {
        if (e instanceof FeedBroke) return e.message;
        throw e;
      }
      const { done, value } = chunk;
      if (done) return null;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n");
      while (end >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (text !== "") onLine(JSON.parse(text) as FeedLine);
        end = buffer.indexOf("\n");
      }
    }
  }

  async #call(
    method: string,
    path: string,
    body: unknown,
    signal: AbortSignal,
    timeoutMs: number | null = this.#timeoutMs,
  ): Promise<Response> {
    let r: Response;
    try {
      r = await fetch(`${this.#base}${path}`, {
        method,
        headers: {
          authorization: this.#auth,
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body: body instanceof RawJson ? body.json : JSON.stringify(body) } : {}),
        signal: timeoutMs === null ? signal : AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (e) {
      throw new LinkError(`the service can't be reached: ${(e as Error).message}`);
    }
    if (!r.ok) throw await refusal(r);
    return r;
  }
}

/** The next chunk of a stream, or a LinkError when none comes within `ms`. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FeedBroke(`the change feed was silent for ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([reader.read(), silence]);
  } catch (e) {
    void reader.cancel().catch(() => {});
    throw e instanceof FeedBroke ? e : new FeedBroke(`the change feed broke: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
