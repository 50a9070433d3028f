#!/usr/bin/env node
// The `kdp/dns` image: kdp's cluster DNS server (src/dns/main.ts), as the `coredns` pods run it
// (`-conf /etc/coredns/Corefile`, in-cluster credentials) and as `kdp-dns --kubeconfig FILE
// --port 0` runs on the host.
import { importBundled } from './bundle-cache.js';

const { dnsMain } = await importBundled('src/dns/main.ts', 'kdp-dns');
process.exitCode = await dnsMain(process.argv.slice(2));
