#!/usr/bin/env node
// The `bridge-conformance` command: the conformance suite's runner (TypeScript through tsx, no build step).
import { register } from 'tsx/esm/api';

register();
const { program } = await import('../conformance/cli.ts');
program()
  .parseAsync()
  .catch((err) => {
    console.error(`bridge-conformance: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  });
