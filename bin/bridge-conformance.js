#!/usr/bin/env node
// The `bridge-conformance` command: the conformance suite's runner.
import { load } from './run.js';

// `bridge-conformance server --list | head`: a reader that stops early is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
const { program } = await load('conformance/cli');
program()
  .parseAsync()
  .catch((err) => {
    console.error(`bridge-conformance: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  });
