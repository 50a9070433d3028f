// docs/cli.md from the command declarations (src/cli/commands/index.ts): every command's usage,
// flags (name, type, default, meaning) and exit statuses, as `--help` prints them. Written by
// `npm run docs:cli` (scripts/cli-doc.ts); test/cli/cli-table.test.ts fails when the file is stale.

import type { Command } from './command.js';
import { COMMANDS } from './commands/index.js';
import { exitTable, COMMON_EXITS } from './exits.js';
import { withCommonFlags, type FlagSpec } from './flags.js';
import { flagFileNote } from './main.js';

/** GitHub's heading anchor of `## \`kdp NAME\``. */
export const commandAnchor = (c: Pick<Command, 'name'>): string => `kdp-${c.name.replace(/ /g, '-')}`;

/** Markdown text: `<…>` outside code spans shown as written (not taken as HTML). */
const text = (s: string): string =>
  s.split('`').map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;'))).join('`');

/** A table cell: pipes escaped (also in code spans, as GitHub's tables need), lines folded. */
const cell = (s: string): string => text(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function flagRow(s: FlagSpec): string {
  const name = `${s.short ? `\`-${s.short}\`, ` : ''}\`--${s.name}\``;
  const type = s.type === 'strings' ? 'string (repeatable)' : s.type;
  const def = s.default === undefined ? '' : `\`${JSON.stringify(s.default)}\``;
  return `| ${name} | ${type} | ${cell(def)} | ${cell(s.help)} |`;
}

function commandSection(c: Command): string {
  const flags = withCommonFlags(c.flags, c.flagFile !== false);
  return [
    `## \`kdp ${c.name}\``, '',
    text(c.summary), '',
    `Usage: \`kdp ${c.name}${c.args ? ` ${c.args}` : ''} [flags]\``, '',
    '| flag | type | default | meaning |', '|---|---|---|---|',
    ...flags.map(flagRow), '',
    '| exit | meaning |', '|---|---|',
    ...exitTable(c).map((e) => `| ${e.code} | ${cell(e.meaning)} |`), '',
  ].join('\n');
}

export function renderCliDoc(commands: readonly Command[] = COMMANDS): string {
  return [
    '# `kdp` command-line reference', '',
    '<!-- Generated from the command declarations in src/cli/commands/ by `npm run docs:cli`; do not edit. -->', '',
    'Every command, its flags and its exit statuses, from the same declarations that parse the ' +
      'command line and print `kdp COMMAND --help`.', '',
    `${flagFileNote(commands)} \`-o json\` gives machine-readable output where a command has it.`, '',
    'Exit statuses every command shares (a command\'s own table below replaces a code it gives another meaning):', '',
    '| exit | meaning |', '|---|---|',
    ...COMMON_EXITS.map((e) => `| ${e.code} | ${cell(e.meaning)} |`), '',
    '| command | what it does |', '|---|---|',
    ...commands.map((c) => `| [\`kdp ${c.name}\`](#${commandAnchor(c)}) | ${cell(c.summary)} |`), '',
    ...commands.map(commandSection),
  ].join('\n');
}
