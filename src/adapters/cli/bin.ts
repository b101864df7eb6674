#!/usr/bin/env node
// The `rsop` executable.
import { runCli } from "./main.js";

runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then((code) => {
  process.exitCode = code;
});
