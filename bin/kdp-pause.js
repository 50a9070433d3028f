#!/usr/bin/env node
// The registry.k8s.io/pause image: sleeps until SIGTERM or SIGINT, then exits 0, as upstream's
// pause.c ("Shutting down, got signal: Terminated" on stderr). `-v` prints the version.
if (process.argv[2] === '-v') {
  console.log('pause.c v3.10 (kdp)');
  process.exit(0);
}
const down = (name) => () => {
  process.stderr.write(`Shutting down, got signal: ${name}\n`);
  process.exit(0);
};
process.on('SIGTERM', down('Terminated'));
process.on('SIGINT', down('Interrupt'));
setInterval(() => undefined, 1 << 30);
