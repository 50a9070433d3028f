// Exit statuses of `kdp` commands: the ones every command shares, and how a command's own
// (`Command.exits`, `Command.errorStatus`) replace them. main.ts maps errors with these, and
// `--help` and docs/cli.md print `exitTable`, so the documented status is the one returned.

import type { ErrorCode } from '../errors.js';
import type { Command, ExitStatus } from './command.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** BSD sysexits EX_SOFTWARE: kdp itself failed (not a KdpError). */
export const EXIT_INTERNAL = 70;

/** Bad flags, config or input: exit 2. */
export const INPUT_ERROR_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'KDP_CONFIG', 'KDP_INPUT', 'KDP_PARSE', 'KDP_DIFF',
]);

const INPUT_CODES = [...INPUT_ERROR_CODES].map((c) => `\`${c}\``).join(', ');

/** The statuses of every command, before its own replace them. */
export const COMMON_EXITS: readonly ExitStatus[] = [
  { code: EXIT_OK, meaning: 'success' },
  { code: EXIT_FAILURE, meaning: 'the command failed (stderr: `error [KDP_…]: …`, a code of the error catalogue)' },
  { code: EXIT_USAGE, meaning: `bad flags, config or input (${INPUT_CODES}), or an unknown command` },
  { code: EXIT_INTERNAL, meaning: 'internal error: a bug in kdp (stderr: `internal error:` and the stack)' },
];

/** Every status `command` exits with, by code: the common ones, with the command's own
 *  replacing those of the same code; with `errorStatus`, every error exits with it. */
export function exitTable(command: Pick<Command, 'exits' | 'errorStatus'>): ExitStatus[] {
  const table = new Map(COMMON_EXITS.map((e) => [e.code, e]));
  if (command.errorStatus !== undefined) {
    table.delete(EXIT_FAILURE);
    table.delete(EXIT_USAGE);
    table.set(command.errorStatus, { code: command.errorStatus,
      meaning: 'any error, whatever its code: bad flags, config or input, or a failure (stderr: `error [KDP_…]: …`)' });
  }
  for (const e of command.exits ?? []) table.set(e.code, e);
  return [...table.values()].sort((a, b) => a.code - b.code);
}

/** The status of a KdpError of `code` raised by `command`. */
export function errorExit(command: Pick<Command, 'errorStatus'>, code: ErrorCode): number {
  return command.errorStatus ?? (INPUT_ERROR_CODES.has(code) ? EXIT_USAGE : EXIT_FAILURE);
}
