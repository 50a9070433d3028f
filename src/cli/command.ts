// The shape of one `kdp` command. Commands receive parsed flags and an IO object; they never
// touch process.argv, process.exit or the console directly, so tests can run them in-process.
// A command's declaration (name, args, flags, exits) is the one source of its flag parsing,
// its `--help` and its section of docs/cli.md (src/cli/cli-doc.ts).

import type { FlagSpec, ParsedArgs } from './flags.js';

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTTY: boolean;
  /** Resolves when the user asks to stop (SIGINT/SIGTERM); used by long-running commands. */
  readonly interrupted: Promise<void>;
}

/** One exit status of a command and what it means. */
export interface ExitStatus {
  readonly code: number;
  readonly meaning: string;
}

export interface Command {
  /** Words after `kdp`, e.g. `rules compile`. */
  readonly name: string;
  readonly summary: string;
  /** Positional part of the usage line, e.g. `SRC DST[:PORT]`. */
  readonly args?: string;
  readonly flags: readonly FlagSpec[];
  /**
   * false: `--config` is not the flag file (COMMON_FLAGS) here, because the command declares a
   * `--config` of its own (`rules compile --config` is the KubeProxyConfiguration, as upstream's
   * `kube-proxy --config`). Default true. A flag declared twice is an error (commandFlags).
   */
  readonly flagFile?: boolean;
  /** Flag parsing stops after this many positionals: the rest are positionals as given, flags
   *  included (`crictl exec CONTAINER sh -c …`). Default: flags anywhere. */
  readonly flagsEndAfterPositionals?: number;
  /** Returns the process exit code. Throws KdpError for user-facing failures. */
  run(args: ParsedArgs, io: CliIO): Promise<number>;
  /**
   * Exit status for every error this command throws, when its own statuses give 1 a meaning
   * (`kdp trace`: 1 is "dropped"), so no error can be read as a verdict. Default: 2 for input
   * errors (INPUT_ERROR_CODES), 1 for other failures.
   */
  readonly errorStatus?: number;
  /** Statuses of this command's own results (`kdp trace`: 1 dropped); a code listed here
   *  replaces the common meaning of that code (exits.ts, COMMON_EXITS). */
  readonly exits?: readonly ExitStatus[];
}
