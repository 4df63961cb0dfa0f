#!/usr/bin/env node
// The `bridge-connector` command: the agent connector. TypeScript handler modules load through tsx's hooks when tsx
// can be found (it is optional), else through Node's own type stripping: registerTypeScriptHooks decides, the same
// function a packaged bin calls before loading dist/. Inside the repository, run.js has already registered tsx's ESM
// hook to run the sources; registering it once more does no harm (this bin always did).
import { load } from './run.js';

const { registerTypeScriptHooks } = await load('src/sdk/connector/typescript-hooks');
await registerTypeScriptHooks();
await load('src/sdk/connector/cli');
