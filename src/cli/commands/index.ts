// Every `kdp` command, in the order `kdp --help` lists them.

import type { Command } from '../command.js';
import { rulesCompileCommand } from './rules-compile.js';
import { traceCommand } from './trace.js';
import { versionCommand } from './version.js';

export const COMMANDS: readonly Command[] = [rulesCompileCommand, traceCommand, versionCommand];
