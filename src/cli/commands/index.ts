// Every `kdp` command, in the order `kdp --help` lists them.

import type { Command } from '../command.js';
import { versionCommand } from './version.js';

export const COMMANDS: readonly Command[] = [versionCommand];
