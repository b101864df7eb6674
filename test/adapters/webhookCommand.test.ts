// `rsop webhook verify`: exit 0 for the right signature of the raw stdin bytes, 1 otherwise, 2 without a secret.
import { createHmac } from "node:crypto";
import { expect, test } from "vitest";
import { run } from "./cliHarness.js";

const BODY = '{"topic":"entity.added","id":"e-1","data":{"firstName":"Zoë"}}\n';
const SIGNATURE = createHmac("sha1", "s3cret").update(Buffer.from(BODY, "utf8")).digest("hex");

test("rsop webhook verify: exit 0 when the signature matches the raw body on stdin", async () => {
  expect(await run(["webhook", "verify", "--secret", "s3cret", "--signature", SIGNATURE], BODY)).toEqual({
    code: 0,
    stdout: `signature ok (${Buffer.byteLength(BODY)} bytes)\n`,
    stderr: "",
  });
});

test("rsop webhook verify: exit 1 for another body, secret or signature", async () => {
  for (const [secret, signature, body] of [
    ["s3cret", SIGNATURE, BODY.trimEnd()],
    ["S3cret", SIGNATURE, BODY],
    ["s3cret", SIGNATURE.replace(/.$/, (c) => (c === "0" ? "1" : "0")), BODY],
    ["s3cret", "not-hex", BODY],
  ] as const) {
    const r = await run(["webhook", "verify", "--secret", secret, "--signature", signature], body);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^rsop: the signature does not match the body \(\d+ bytes\) and secret\n$/);
  }
});

test("rsop webhook verify: exit 2 without a secret or a signature", async () => {
  const noSecret = await run(["webhook", "verify", "--signature", SIGNATURE], BODY);
  expect(noSecret.code).toBe(2);
  expect(noSecret.stderr).toContain("give the subscription's secret");
  expect((await run(["webhook", "verify", "--secret", "s3cret"], BODY)).code).toBe(2);
});

test("rsop serve: --organization-id and --webhook-* need --data or --store; a --webhook-* value must be a positive integer (exit 2)", async () => {
  const noData = await run([
    "serve",
    "--system",
    "examples/building.json",
    "--insecure-no-auth",
    "--webhook-attempts",
    "3",
  ]);
  expect(noData.code).toBe(2);
  expect(noData.stderr).toContain("--organization-id and --webhook-* need --data FILE.db or --store postgres://…");
  const zero = await run(["serve", "--data", "never-created.db", "--insecure-no-auth", "--webhook-backoff", "0"]);
  expect(zero.code).toBe(2);
  expect(zero.stderr).toContain('--webhook-backoff must be a positive integer, got "0"');
});
