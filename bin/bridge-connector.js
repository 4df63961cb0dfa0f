#!/usr/bin/env node
// The `bridge-connector` command: the agent connector. Both of tsx's hooks are registered, ESM and CommonJS,
// installed or not, so that a TypeScript handler module loads wherever it lives (a `.ts` file outside a
// `"type": "module"` package goes through the CommonJS one).
import { register } from 'tsx/esm/api';
import { register as registerCommonJs } from 'tsx/cjs/api';
import { load } from './run.js';

register();
registerCommonJs();
await load('src/sdk/connector/cli');
