#!/usr/bin/env node
// The `bridge-connector` command: the agent connector (TypeScript through tsx, no build step). Both of tsx's hooks
// are registered, ESM and CommonJS, so that a TypeScript handler module loads wherever it lives (a `.ts` file
// outside a `"type": "module"` package goes through the CommonJS one).
import { register } from 'tsx/esm/api';
import { register as registerCommonJs } from 'tsx/cjs/api';

register();
registerCommonJs();
await import('../src/sdk/connector/cli.ts');
