import { readFileSync } from 'node:fs';
import type { Command } from '../command.js';

export const versionCommand: Command = {
  name: 'version',
  summary: 'print the kdp version',
  flags: [{ name: 'output', short: 'o', type: 'string', help: 'json for machine-readable output' }],
  async run(args, io) {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    const v = { kdp: pkg.version as string, node: process.version };
    io.out(args.flags.output === 'json' ? `${JSON.stringify(v)}\n` : `kdp ${v.kdp} (node ${v.node})\n`);
    return 0;
  },
};
