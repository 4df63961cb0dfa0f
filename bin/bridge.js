#!/usr/bin/env node
// The `bridge` command. The project runs its TypeScript through tsx, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
