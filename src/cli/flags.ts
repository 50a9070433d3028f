// Command-line flags and config files → one validated options object (configuration flows one
// way: flags override the config file, which overrides defaults; commands never read argv).

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { kdpError } from '../errors.js';

export type FlagType = 'string' | 'boolean' | 'number' | 'strings';

export interface FlagSpec {
  readonly name: string;
  readonly type: FlagType;
  readonly short?: string;
  readonly help: string;
  readonly default?: string | boolean | number | readonly string[];
}

export type FlagValues = Record<string, string | boolean | number | string[] | undefined>;

export interface ParsedArgs {
  readonly flags: FlagValues;
  readonly positionals: readonly string[];
}

/** Flags every command accepts (`--config` only where the command keeps the flag file). */
export const COMMON_FLAGS: readonly FlagSpec[] = [
  { name: 'config', type: 'string', help: 'YAML file whose keys are flag names (flags win)' },
  { name: 'help', type: 'boolean', short: 'h', help: 'show this help' },
];

/**
 * Every flag of a command: its own, then the common ones (`--config`, the flag file, unless
 * `flagFile` is false). A name or short letter given twice is a bug in the declaration, so it
 * throws (test/cli/cli-table.test.ts checks every command).
 */
export function withCommonFlags(specs: readonly FlagSpec[], flagFile = true): FlagSpec[] {
  const all = [...specs, ...COMMON_FLAGS.filter((c) => flagFile || c.name !== 'config')];
  const problems = flagConflicts(all);
  if (problems.length) throw new Error(`flag declaration: ${problems.join('; ')}`);
  return all;
}

/** Names or short letters declared more than once (each would have two meanings). */
export function flagConflicts(specs: readonly FlagSpec[]): string[] {
  const seen = new Map<string, FlagSpec>();
  const out: string[] = [];
  for (const s of specs) {
    for (const key of [`--${s.name}`, ...(s.short ? [`-${s.short}`] : [])]) {
      const before = seen.get(key);
      if (before) out.push(`${key} is declared twice ("${before.help}" and "${s.help}")`);
      else seen.set(key, s);
    }
  }
  return out;
}

/** argv → flag values (flag, else flag file, else default, coerced to the flag's type) and
 *  positionals. Input errors are KDP_CONFIG naming the flag or key. */
export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[], endAfterPositionals?: number,
  flagFile = true): ParsedArgs {
  const all = withCommonFlags(specs, flagFile);
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> =
    {};
  for (const s of all) {
    options[s.name] = {
      type: s.type === 'boolean' ? 'boolean' : 'string',
      ...(s.short ? { short: s.short } : {}),
      ...(s.type === 'strings' ? { multiple: true } : {}),
    };
  }
  const { head, tail } = splitAfterPositionals(argv, options, endAfterPositionals);
  let parsed;
  try {
    parsed = parseArgs({ args: head, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw kdpError('KDP_CONFIG', (e as Error).message);
  }
  if (tail.length) parsed = { ...parsed, positionals: [...parsed.positionals, ...tail] };
  const fromFile = flagFile && typeof parsed.values.config === 'string'
    ? readConfigFile(parsed.values.config as string) : {};
  const flags: FlagValues = {};
  for (const s of all) {
    const raw = parsed.values[s.name] ?? fromFile[s.name] ?? s.default;
    flags[s.name] = raw === undefined ? undefined : coerce(s, raw);
  }
  for (const key of Object.keys(fromFile)) {
    if (!all.some((s) => s.name === key)) {
      throw kdpError('KDP_CONFIG', `config file: unknown key "${key}"`);
    }
  }
  return { flags, positionals: parsed.positionals };
}

/** argv up to its n-th positional (flags parsed), and what follows it (taken as given; a
 *  leading `--` dropped). */
function splitAfterPositionals(argv: readonly string[],
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>, n?: number):
  { head: string[]; tail: string[] } {
  if (!n) return { head: [...argv], tail: [] };
  const { tokens } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: false, tokens: true });
  let seen = 0;
  for (const t of tokens ?? []) {
    if (t.kind === 'option-terminator') break;
    if (t.kind === 'positional' && ++seen === n) {
      const tail = argv.slice(t.index + 1);
      return { head: argv.slice(0, t.index + 1), tail: tail[0] === '--' ? tail.slice(1) : tail };
    }
  }
  return { head: [...argv], tail: [] };
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw kdpError('KDP_CONFIG', `--config: cannot read ${path}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw kdpError('KDP_CONFIG', `--config ${path}: ${(e as Error).message}`);
  }
  if (doc == null) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw kdpError('KDP_CONFIG', `--config ${path}: expected a mapping of flag names to values`);
  }
  return doc as Record<string, unknown>;
}

function coerce(s: FlagSpec, raw: unknown): string | boolean | number | string[] {
  const bad = (): never => {
    throw kdpError('KDP_CONFIG', `--${s.name}: expected ${s.type}, got ${JSON.stringify(raw)}`);
  };
  switch (s.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === 'false') return raw === 'true';
      return bad();
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(raw);
      if (!Number.isFinite(n) || (typeof raw === 'string' && raw.trim() === '')) return bad();
      return n;
    }
    case 'strings':
      if (Array.isArray(raw)) return raw.map(String);
      if (typeof raw === 'string') return [raw];
      return bad();
    case 'string':
      if (typeof raw === 'string' || typeof raw === 'number') return String(raw);
      return bad();
  }
}

/** `--help`'s flag list of a command's every flag (withCommonFlags). */
export function formatFlagHelp(all: readonly FlagSpec[]): string {
  const rows = all.map((s) => {
    const short = s.short ? `-${s.short}, ` : '    ';
    const arg = s.type === 'boolean' ? '' : s.type === 'strings' ? ' VALUE (repeatable)' : ' VALUE';
    const def = s.default === undefined ? '' : ` (default ${JSON.stringify(s.default)})`;
    return `  ${short}--${s.name}${arg}\n      ${s.help}${def}`;
  });
  return rows.join('\n');
}
