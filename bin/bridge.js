#!/usr/bin/env node
// The `bridge` command.
import { load } from './run.js';

await load('src/cli/main');
