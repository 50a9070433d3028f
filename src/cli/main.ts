// `kdp` entry point: finds the command, parses its flags, runs it, maps errors to exit codes.

import { isKdpError, type ErrorCode } from '../errors.js';
import type { CliIO, Command } from './command.js';
import { formatFlagHelp, parseFlags } from './flags.js';
import { COMMANDS } from './commands/index.js';
import { journalIO } from './component-journal.js';

/** Bad flags, config or input (README: exit 2); other failures exit 1, crashes 70. */
export const INPUT_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'KDP_CONFIG', 'KDP_INPUT', 'KDP_PARSE', 'KDP_DIFF',
]);

export async function main(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const found = findCommand(COMMANDS, argv);
  if (!found) {
    const wantsHelp = argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help';
    (wantsHelp ? io.out : io.err)(topHelp(COMMANDS, wantsHelp ? '' : `unknown command: ${argv.join(' ')}\n\n`));
    return wantsHelp ? 0 : 2;
  }
  const { command, rest } = found;
  try {
    const parsed = parseFlags(rest, command.flags, command.flagsEndAfterPositionals);
    if (parsed.flags.help) {
      io.out(commandHelp(command));
      return 0;
    }
    return await command.run(parsed, journalIO(command, parsed.flags, io));
  } catch (e) {
    if (isKdpError(e)) {
      io.err(`error [${e.code}]: ${e.message}\n`);
      for (const c of e.details.causes ?? []) io.err(`  ${c.field}: ${c.message}\n`);
      return command.errorStatus ?? (INPUT_ERROR_CODES.has(e.code) ? 2 : 1);
    }
    io.err(`internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 70;
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
    'Run `kdp COMMAND --help` for its flags. Every flag can also come from --config FILE.\n';
}

function commandHelp(c: Command): string {
  return `Usage: kdp ${c.name}${c.args ? ` ${c.args}` : ''} [flags]\n\n${c.summary}\n\nFlags:\n` +
    `${formatFlagHelp(c.flags)}\n`;
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
