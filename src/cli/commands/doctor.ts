// `kdp doctor`: the preflight checks netns mode needs (src/host/preflight.ts), each with the
// package that fixes it. Exit 0 when `sudo kdp up` can run netns mode here, 1 otherwise.

import type { Command } from '../command.js';

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'check what netns mode needs on this machine (root, kernel, programs) and how to fix it',
  exits: [
    { code: 0, meaning: 'netns mode can run here' },
    { code: 1, meaning: 'netns mode cannot run here (the failed checks, and the packages that fix them)' },
  ],
  flags: [{ name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }],
  async run(args, io) {
    const { installHint, localPreflightHost, preflightChecks, preflightFailures, renderChecks } =
      await import('../../host/preflight.js');
    const checks = preflightChecks(localPreflightHost(io.env));
    const failed = preflightFailures(checks);
    if (args.flags.output === 'json') {
      io.out(`${JSON.stringify({ netnsMode: failed.length === 0, checks }, null, 2)}\n`);
      return failed.length ? 1 : 0;
    }
    io.out(renderChecks(checks));
    const hint = installHint(checks.filter((c) => c.ok === false));
    if (failed.length === 0) {
      io.out('\nnetns mode: ready (`sudo kdp up`)\n');
      if (hint) io.out(`optional extras: ${hint}\n`);
      return 0;
    }
    io.out(`\nnetns mode: not possible here (${failed.map((c) => c.name).join(', ')}); ` +
      `kdp up runs virtual mode\n${hint ? `fix: ${hint}\n` : ''}`);
    return 1;
  },
};
