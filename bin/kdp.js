#!/usr/bin/env node
import { importBundled } from './bundle-cache.js';

const { main } = await importBundled('src/cli/main.ts', 'kdp');
process.exitCode = await main(process.argv.slice(2));
