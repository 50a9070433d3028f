// `kdp` entry point: finds the command, parses its flags, runs it, maps errors to exit codes.

import { isKdpError } from '../errors.js';
import type { CliIO, Command } from './command.js';
import { formatFlagHelp, parseFlags, withCommonFlags } from './flags.js';
import { COMMANDS } from './commands/index.js';
import { journalIO } from './component-journal.js';
import { errorExit, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, exitTable } from './exits.js';

/** `commands`: the table to run from (tests give their own to reach every exit status). */
export async function main(argv: readonly string[], io: CliIO = processIO(),
  commands: readonly Command[] = COMMANDS): Promise<number> {
  const found = findCommand(commands, argv);
  if (!found) {
    const wantsHelp = argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help';
    (wantsHelp ? io.out : io.err)(topHelp(commands, wantsHelp ? '' : `unknown command: ${argv.join(' ')}\n\n`));
    return wantsHelp ? EXIT_OK : EXIT_USAGE;
  }
  const { command, rest } = found;
  try {
    const parsed = parseFlags(rest, command.flags, command.flagsEndAfterPositionals, command.flagFile !== false);
    if (parsed.flags.help) {
      io.out(commandHelp(command));
      return EXIT_OK;
    }
    return await command.run(parsed, journalIO(command, parsed.flags, io));
  } catch (e) {
    if (isKdpError(e)) {
      io.err(`error [${e.code}]: ${e.message}\n`);
      for (const c of e.details.causes ?? []) io.err(`  ${c.field}: ${c.message}\n`);
      return errorExit(command, e.code);
    }
    io.err(`internal error: ${(e as Error).stack ?? String(e)}\n`);
    return EXIT_INTERNAL;
  }
}

export function findCommand(
  commands: readonly Command[],
  argv: readonly string[],
): { command: Command; rest: readonly string[] } | undefined {
  let best: Command | undefined;
  let bestLen = 0;
  for (const c of commands) {
    const words = c.name.split(' ');
    if (words.length > bestLen && words.every((w, i) => argv[i] === w)) {
      best = c;
      bestLen = words.length;
    }
  }
  return best ? { command: best, rest: argv.slice(bestLen) } : undefined;
}

function topHelp(commands: readonly Command[], prefix: string): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  const lines = commands.map((c) => `  kdp ${c.name.padEnd(width)}${c.summary}`);
  return `${prefix}kdp — Kubernetes networking data-plane emulator\n\nUsage:\n${lines.join('\n')}\n\n` +
    `Run \`kdp COMMAND --help\` for its flags and exit statuses. ${flagFileNote(commands)}\n`;
}

/** Where flags may come from a YAML file (`--config`), and the commands where they may not. */
export function flagFileNote(commands: readonly Command[]): string {
  const own = commands.filter((c) => c.flagFile === false).map((c) => `kdp ${c.name}`);
  return 'Every flag can also come from --config FILE (YAML, keys are flag names; flags win)' +
    `${own.length ? `, except in ${own.join(', ')}, whose --config is its own flag` : ''}.`;
}

export function commandHelp(c: Command): string {
  const exits = exitTable(c).map((e) => `  ${String(e.code).padEnd(4)}${e.meaning}`);
  return `Usage: kdp ${c.name}${c.args ? ` ${c.args}` : ''} [flags]\n\n${c.summary}\n\nFlags:\n` +
    `${formatFlagHelp(withCommonFlags(c.flags, c.flagFile !== false))}\n\nExit status:\n${exits.join('\n')}\n`;
}

function processIO(): CliIO {
  let closed = false;
  const interrupted = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    // The reader went away (`kdp logs | head`): no more output, and a long command stops.
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
      closed = true;
      resolve();
    });
  });
  return {
    out: (t) => { if (!closed) process.stdout.write(t); },
    err: (t) => void process.stderr.write(t),
    env: process.env,
    isTTY: Boolean(process.stdout.isTTY),
    interrupted,
  };
}
