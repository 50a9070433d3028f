#!/usr/bin/env -S node --single-threaded-gc
// The flags after `node` are src/cli/node-flags.ts's KDP_NODE_FLAGS (a test keeps them equal).
import { importBundled } from './bundle-cache.js';

const { main } = await importBundled('src/cli/main.ts', 'kdp');
process.exitCode = await main(process.argv.slice(2));
