// A worker thread of `rsop decide --workers N` (decidePool.ts): loads the snapshot, then answers
// each chunk of request lines it is given, as the command's own thread would (lineAnswerer).
import { parentPort, workerData } from "node:worker_threads";
import { AnswerBuffer } from "./answerBuffer.js";
import { type Answerer, lineAnswerer } from "./decideCommand.js";
import type { ChunkAnswers, DecideChunk, DecideWorkerData, DecideWorkerMessage } from "./decidePool.js";
import { CliError, type CliIo, UsageError } from "./io.js";
import { loadPanelFile, loadSystemFile } from "./loadSystem.js";

const data = workerData as DecideWorkerData;
const port = parentPort!;
// The snapshot is a file (never stdin, which the command's thread reads); nothing is printed here.
const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr } as CliIo;
let answerer: Answerer | null = null;
try {
  answerer =
    data.kind === "system"
      ? lineAnswerer({ kind: "system", engine: await loadSystemFile(data.path, io) })
      : lineAnswerer({ kind: "panel", panel: await loadPanelFile(data.path, io) });
} catch (e) {
  // What the command's thread would have said loading it (the pool says it once); with no listener the
  // worker then ends by itself.
  if (e instanceof CliError) port.postMessage({ error: e.message, issues: e.issues } satisfies DecideWorkerMessage);
  else if (e instanceof UsageError) port.postMessage({ error: e.message, usage: true } satisfies DecideWorkerMessage);
  else
    port.postMessage({
      error: `a decide worker could not load ${data.path}: ${(e as Error).message}`,
    } satisfies DecideWorkerMessage);
}
if (answerer !== null) {
  listen(answerer);
  port.postMessage({ ready: true } satisfies DecideWorkerMessage);
}

/** Answers each chunk of lines it is given. */
function listen(answerer: Answerer): void {
  const out = new AnswerBuffer();
  port.on("message", (chunk: DecideChunk) => {
    const refused: ChunkAnswers["refused"][number][] = [];
    for (let k = 0; k < chunk.lines.length; k++) {
      const line = chunk.lines[k]!;
      const why = answerer.text(chunk.texts[k]!, line, false, out);
      if (why !== null) refused.push({ line, ...why });
    }
    // The bytes' memory is the buffer's own (AnswerBuffer.take): handed over, not copied.
    const bytes = out.take();
    port.postMessage({ seq: chunk.seq, bytes, count: chunk.lines.length, refused } satisfies DecideWorkerMessage, [
      bytes.buffer as ArrayBuffer,
    ]);
  });
}
