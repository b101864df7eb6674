// `rsop decide` reads its requests with readLines (src/adapters/cli/lineReader.ts) instead of node's
// readline: the same lines for any text, however it is cut into chunks (multi-byte characters split
// across them, "\r\n" split across them, lone "\r"), checked against readline itself.
import { once } from "node:events";
import { createInterface } from "node:readline";
import { PassThrough, Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { readLines } from "../../src/adapters/cli/lineReader.js";
import { NUM_RUNS, TIMEOUT } from "../property/support.js";

/** The lines readline gives for these chunks (crlfDelay Infinity, as `rsop decide` used it). */
async function viaReadline(chunks: readonly Buffer[]): Promise<string[]> {
  const out: string[] = [];
  const rl = createInterface({ input: Readable.from(chunks), crlfDelay: Infinity });
  rl.on("line", (l) => out.push(l));
  await once(rl, "close");
  return out;
}

async function viaReadLines(chunks: readonly (Buffer | string)[]): Promise<string[]> {
  const out: string[] = [];
  await readLines(Readable.from(chunks), (l) => out.push(l)).done;
  return out;
}

/** `bytes` cut at the given positions (sorted, deduplicated, inside the buffer). */
function cutAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of at) {
    if (c > from) out.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  if (from < bytes.length) out.push(bytes.subarray(from));
  return out;
}

describe("readLines", () => {
  test(
    "gives readline's lines for any text and any cutting into chunks",
    async () => {
      const piece = fc.constantFrom("a", "{}", "\n", "\r", "\r\n", "é", "😀", " ", "\n\n");
      await fc.assert(
        fc.asyncProperty(
          fc.array(piece, { maxLength: 40 }),
          fc.array(fc.nat(200), { maxLength: 8 }),
          async (pieces, cuts) => {
            const bytes = Buffer.from(pieces.join(""), "utf8");
            const chunks = cutAt(bytes, cuts);
            expect(await viaReadLines(chunks)).toEqual(await viaReadline(chunks));
          },
        ),
        { numRuns: NUM_RUNS },
      );
    },
    TIMEOUT,
  );

  test("fixed cases: blank lines count, no line after a final end of line, a last line without one", async () => {
    expect(await viaReadLines(["a\n\nb\n"])).toEqual(["a", "", "b"]);
    expect(await viaReadLines(["a\r", "\nb"])).toEqual(["a", "b"]);
    expect(await viaReadLines(["a\rb\r"])).toEqual(["a", "b"]);
    expect(await viaReadLines([Buffer.from([0xc3]), Buffer.from([0xa9, 0x0a])])).toEqual(["é"]);
    expect(await viaReadLines([])).toEqual([]);
  });

  test("close() stops the lines at once, even within a chunk, and settles done", async () => {
    const input = new PassThrough();
    const out: string[] = [];
    const reader = readLines(input, (l) => {
      out.push(l);
      if (l === "stop") reader.close();
    });
    input.write("a\nstop\nnever\n");
    await reader.done;
    expect(out).toEqual(["a", "stop"]);
    input.write("later\n");
    input.end();
    expect(out).toEqual(["a", "stop"]);
  });

  test("pause() holds back the next chunk until resume()", async () => {
    const input = new PassThrough();
    const out: string[] = [];
    const reader = readLines(input, (l) => out.push(l));
    reader.pause();
    input.write("a\n");
    await new Promise((r) => setTimeout(r, 20));
    expect(out).toEqual([]);
    reader.resume();
    input.end("b\n");
    await reader.done;
    expect(out).toEqual(["a", "b"]);
  });

  test("an error of the input rejects done", async () => {
    const input = new PassThrough();
    const reader = readLines(input, () => {});
    input.destroy(Object.assign(new Error("boom"), { code: "EIO" }));
    await expect(reader.done).rejects.toThrow("boom");
  });
});
