#!/usr/bin/env node
import { importBundled } from './bundle-cache.js';

const { main } = await importBundled('src/cni/main.ts', 'kdp-cni');
process.exitCode = await main();
