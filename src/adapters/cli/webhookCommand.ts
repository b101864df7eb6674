// `rsop webhook verify`: checks the X-SERVICE-SIGNATURE of a notification body read from stdin, for
// receivers and for an operator looking at a captured notification (exit 0 valid, 1 not).
import type { Command } from "commander";
import { verifySignature } from "../../events/signature.js";
import { CliError, type CliIo, UsageError } from "./io.js";

/** The whole of stdin as bytes: the signature is over the raw body, not over its decoding. */
async function readBytes(io: CliIo): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin)
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Registers `rsop webhook …` on the program. */
export function registerWebhookCommand(
  program: Command,
  io: CliIo,
  setCode: (code: number) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const webhook = program.command("webhook").description("Tools for webhook receivers.");
  webhook
    .command("verify")
    .description(
      "Check a notification's X-SERVICE-SIGNATURE against its raw body on stdin: exit 0 when it matches, 1 when not.",
    )
    .option(
      "--secret <secret>",
      "the subscription's secret (or set RSOP_WEBHOOK_SECRET, which keeps it out of the process list)",
    )
    .requiredOption("--signature <hex>", "the X-SERVICE-SIGNATURE header of the notification")
    .action(async (opts: { secret?: string; signature: string }) => {
      const secret = opts.secret ?? env.RSOP_WEBHOOK_SECRET;
      if (secret === undefined || secret === "")
        throw new UsageError("give the subscription's secret: --secret S or RSOP_WEBHOOK_SECRET");
      const body = await readBytes(io);
      if (!verifySignature(body, opts.signature, secret))
        throw new CliError(`the signature does not match the body (${body.length} bytes) and secret`);
      io.stdout.write(`signature ok (${body.length} bytes)\n`);
      setCode(0);
    });
}
