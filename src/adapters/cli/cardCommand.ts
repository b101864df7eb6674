import { type Command, InvalidArgumentError } from "commander";
import {
  type CardNumber,
  KNOWN_CARD_FORMATS,
  cardNumberValue,
  decodeWiegand,
  encodeWiegand,
  isCardNumber,
} from "../../model/index.js";
import { type CliIo, UsageError } from "./io.js";

function integer(name: string) {
  return (v: string): number => {
    if (!/^[0-9]+$/.test(v)) throw new InvalidArgumentError(`${name} must be a non-negative integer.`);
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`${name} must be at most ${Number.MAX_SAFE_INTEGER}.`);
    return n;
  };
}

/** A card number of any width up to 512 bits (CN1): digits, leading zeros dropped. */
function cardNumberArg(v: string): CardNumber {
  if (!/^[0-9]+$/.test(v)) throw new InvalidArgumentError("--card-number must be a non-negative integer.");
  const canonical = v.replace(/^0+(?=.)/, "");
  if (!isCardNumber(canonical)) throw new InvalidArgumentError("--card-number must be at most 2^512−1.");
  return cardNumberValue(canonical);
}

function known(id: string) {
  const f = KNOWN_CARD_FORMATS[id];
  if (f === undefined) throw new UsageError(`unknown card format "${id}"; \`rsop card formats\` lists the known ones`);
  return f;
}

function ranges(positions: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < positions.length; ) {
    let j = i;
    while (j + 1 < positions.length && positions[j + 1] === positions[j]! + 1) j++;
    out.push(i === j ? `${positions[i]}` : `${positions[i]}-${positions[j]}`);
    i = j + 1;
  }
  return out.join(",");
}

/** Registers `rsop card …` on the program: simulate reader frames of the well-known card formats. */
export function registerCardCommand(program: Command, io: CliIo, setCode: (code: number) => void): void {
  // Created through program.command() so the subcommands inherit exitOverride and configureOutput.
  const card = program.command("card").description("Encode and decode Wiegand frames of the well-known card formats.");
  card
    .command("encode")
    .description("Print the bit string (MSB first) a reader sends for a card.")
    .requiredOption("--format <id>", "card format id, e.g. H10301")
    .option("--facility-code <n>", "facility code (formats that have one; default 0)", integer("--facility-code"))
    .requiredOption("--card-number <n>", "card number (any width up to 512 bits)", cardNumberArg)
    .action((opts: { format: string; facilityCode?: number; cardNumber: CardNumber }) => {
      known(opts.format);
      try {
        io.stdout.write(
          `${encodeWiegand(opts.format, { facilityCode: opts.facilityCode ?? null, cardNumber: opts.cardNumber })}\n`,
        );
      } catch (e) {
        // A number that does not fit the format's field: the options are wrong (exit 2).
        throw new UsageError((e as Error).message);
      }
      setCode(0);
    });
  card
    .command("decode")
    .description('Print {"facilityCode", "cardNumber", "parityOk"} of a frame.')
    .requiredOption("--format <id>", "card format id, e.g. H10301")
    .requiredOption("--bits <bits>", "the frame, 0 and 1, MSB first")
    .action((opts: { format: string; bits: string }) => {
      known(opts.format);
      try {
        io.stdout.write(`${JSON.stringify(decodeWiegand(opts.format, opts.bits))}\n`);
      } catch (e) {
        // Bits that are not a frame of the format (length, characters): the option is wrong (exit 2).
        throw new UsageError((e as Error).message);
      }
      setCode(0);
    });
  card
    .command("formats")
    .description(
      "List the well-known card formats: id, bits, fields and parity (0-based positions from the first bit sent).",
    )
    .option("--json", "print the table as JSON")
    .action((opts: { json?: boolean }) => {
      const rows = Object.values(KNOWN_CARD_FORMATS);
      if (opts.json) io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else
        for (const f of rows) {
          const fc =
            f.facilityCode === null
              ? "no FC"
              : `FC ${f.facilityCode.offset}-${f.facilityCode.offset + f.facilityCode.length - 1}`;
          const cn = `CN ${f.cardNumber.offset}-${f.cardNumber.offset + f.cardNumber.length - 1}`;
          const parity = f.parity.map((p) => `${p.position}:${p.odd ? "odd" : "even"}(${ranges(p.covers)})`).join(" ");
          io.stdout.write(
            `${f.id.padEnd(10)} ${String(f.bits).padStart(2)} bits  ${fc.padEnd(9)} ${cn.padEnd(9)} ${parity}  ${f.description}\n`,
          );
        }
      setCode(0);
    });
}
