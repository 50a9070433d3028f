// The command declarations are the one table of kdp's flags and exit statuses: docs/cli.md is
// generated from them (and must not be stale), no command declares a flag twice, and every
// documented exit status is what a representative case returns — or is named below with the
// test that reaches it (it needs root, a netns cluster or an etcd cluster).

import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCliDoc } from '../../src/cli/cli-doc.js';
import type { Command } from '../../src/cli/command.js';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { exitTable } from '../../src/cli/exits.js';
import { flagConflicts, withCommonFlags } from '../../src/cli/flags.js';
import { main } from '../../src/cli/main.js';
import { kdpError } from '../../src/errors.js';
import { captureIO } from '../helpers/cli.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const at = (p: string) => join(root, p);
const DUMP = at('test/fixtures/foreign-kind-node.iptables-save');

describe('docs/cli.md', () => {
  it('is what `npm run docs:cli` writes from the command declarations', () => {
    expect(readFileSync(at('docs/cli.md'), 'utf8'), 'docs/cli.md is stale: run npm run docs:cli')
      .toBe(renderCliDoc());
  });

  it('documents each command with every flag it parses and every exit status', () => {
    const doc = renderCliDoc();
    for (const c of COMMANDS) {
      const section = doc.split(`## \`kdp ${c.name}\`\n`)[1]!.split('\n## ')[0]!;
      for (const f of withCommonFlags(c.flags, c.flagFile !== false)) expect(section).toContain(`\`--${f.name}\``);
      for (const e of exitTable(c)) expect(section).toMatch(new RegExp(`^\\| ${e.code} \\|`, 'm'));
    }
  });
});

describe('flag declarations', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('kdp %s declares no flag or short letter twice', (_n, c) => {
    expect(flagConflicts([...c.flags, ...withCommonFlags([], c.flagFile !== false)])).toEqual([]);
  });

  it('finds a name or a short letter declared twice, and refuses to parse with it', () => {
    const twice = [{ name: 'config', type: 'string', help: 'a KubeProxyConfiguration' } as const];
    expect(flagConflicts(withCommonFlags(twice, false))).toEqual([]);
    expect(() => withCommonFlags(twice)).toThrow(/--config is declared twice \("a KubeProxyConfiguration" and "YAML file/);
    expect(flagConflicts([{ name: 'follow', short: 'f', type: 'boolean', help: 'a' },
      { name: 'filename', short: 'f', type: 'string', help: 'b' }])).toEqual(['-f is declared twice ("a" and "b")']);
  });

  it('kdp --help names the commands whose --config is their own, and theirs lists it once', async () => {
    const io = captureIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdout).toContain('except in kdp rules compile, whose --config is its own flag');
    const help = captureIO();
    expect(await main(['rules', 'compile', '--help'], help)).toBe(0);
    expect(help.stdout.match(/--config\b/g)).toHaveLength(2); // the flag, and --kube-proxy-config's "same as --config"
    expect(help.stdout).toMatch(/Exit status:\n {2}0 {3}success\n/);
  });
});

/** A loopback DNS server: NOERROR with one A record for `ok.test`, NXDOMAIN for anything else. */
function dnsServer(): Promise<{ port: number; close(): void }> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    const q = dnsPacket.decode(msg);
    const name = q.questions?.[0]?.name ?? '';
    const ok = name === 'ok.test';
    const answer = dnsPacket.encode({ type: 'response', id: q.id, flags: ok ? dnsPacket.AUTHORITATIVE_ANSWER : 3,
      questions: q.questions, answers: ok && q.questions?.[0]?.type === 'A'
        ? [{ type: 'A', name, ttl: 5, data: '192.0.2.1' }] : [] });
    sock.send(answer, rinfo.port, rinfo.address);
  });
  return new Promise((resolve) => sock.bind(0, '127.0.0.1', () =>
    resolve({ port: sock.address().port, close: () => sock.close() })));
}

interface Case {
  readonly command: string; readonly argv: readonly string[]; readonly code: number;
  readonly env?: Record<string, string | undefined>;
}

/** Exit statuses no case here reaches: the test that does, or why none does (each needs
 *  root, a netns cluster, an etcd cluster or a broken one). A new documented status must get a
 *  case above or an entry here. */
const ELSEWHERE: ReadonlyArray<{ command: string; code: number; test?: string; why: string }> = [
  { command: 'crictl', code: 0, test: 'test/cli/crictl-virtual.test.ts', why: 'exec passes the container command\'s status on' },
  { command: 'trace', code: 3, why: 'a fidelity bug: the live tests (test/trace/live-trace-cluster.test.ts) expect 0 and 1' },
  { command: 'verify', code: 1, why: 'a running cluster that breaks the network model' },
  { command: 'verify', code: 3, why: 'a fidelity bug of --netpol --live (netns, root)' },
  { command: 'etcd status', code: 0, why: 'a local etcd cluster (test/cluster/etcd-cluster.test.ts checks the output)' },
  { command: 'etcd status', code: 1, why: 'an etcd cluster without quorum (test/cluster/etcd-cluster.test.ts checks the output)' },
  { command: 'down', code: 1, why: 'not root with kernel objects recorded, or a process surviving SIGKILL' },
];

describe('every documented exit status is the one returned', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kdp-cli-table-'));
  let dns: { port: number; close(): void };
  beforeAll(async () => { dns = await dnsServer(); });
  afterAll(() => { dns.close(); rmSync(tmp, { recursive: true, force: true }); });

  const crash: Command = { name: 'crash', summary: 'throws a bug', flags: [],
    run: async () => { throw new TypeError('a bug'); } };
  const failing: Command = { name: 'failing', summary: 'a failure', flags: [],
    run: async () => { throw kdpError('KDP_NOT_FOUND', 'no such thing'); } };
  const testCommands = [crash, failing];

  const cases = (): Case[] => [
    { command: 'version', argv: ['version'], code: 0 },
    { command: 'version', argv: ['version', '--bogus'], code: 2 },
    { command: 'failing', argv: ['failing'], code: 1 },
    { command: 'crash', argv: ['crash'], code: 70 },
    { command: 'rules compile', argv: ['rules', 'compile', '-f', at('rules/01-clusterip/objects.yaml')], code: 0 },
    { command: 'rules compile', argv: ['rules', 'compile'], code: 2 },
    { command: 'trace', argv: ['trace', '--rules', DUMP, '--node-ip', '172.19.0.3', '--proto', 'udp',
      '10.244.0.5', '10.96.0.10:53'], code: 0 },
    { command: 'trace', argv: ['trace', '--rules', DUMP, '--node-ip', '172.19.0.3', '10.244.0.5', '10.96.200.15:80'], code: 1 },
    { command: 'trace', argv: ['trace', '--rules', '/nonexistent/dump', '10.244.0.5', '10.96.0.10:53'], code: 2 },
    { command: 'diff', argv: ['diff', DUMP, DUMP], code: 0 },
    { command: 'diff', argv: ['diff', at('rules/01-clusterip/iptables.golden'), at('rules/02-multi-port/iptables.golden')], code: 1 },
    { command: 'diff', argv: ['diff', DUMP, '/nonexistent/dump'], code: 2 },
    { command: 'verify', argv: ['verify', '--netpol', '-f', at('rules/01-clusterip/objects.yaml')], code: 0 },
    // This machine runs the netns tests (CI has every program); with no PATH, programs are missing.
    { command: 'doctor', argv: ['doctor'], code: 0, env: process.env },
    { command: 'doctor', argv: ['doctor'], code: 1, env: { PATH: join(tmp, 'empty') } },
    { command: 'dns lookup', argv: ['dns', 'lookup', '--server', `127.0.0.1:${dns.port}`, 'ok.test.'], code: 0 },
    { command: 'dns lookup', argv: ['dns', 'lookup', '--server', `127.0.0.1:${dns.port}`, 'missing.test.'], code: 1 },
    { command: 'down', argv: ['down', '--data-dir', join(tmp, 'none')], code: 0 },
  ];

  it('for a representative case of each, or in the test named for it', async () => {
    const covered = new Set<string>();
    const table = [...COMMANDS, ...testCommands];
    const byName = new Map(table.map((c) => [c.name, c]));
    for (const k of cases()) {
      const io = captureIO();
      if (k.env) Object.assign(io, { env: k.env });
      const code = await main(k.argv, io, table);
      expect(code, `kdp ${k.argv.join(' ')}: ${io.stderr}`).toBe(k.code);
      const meaning = exitTable(byName.get(k.command)!).find((e) => e.code === code);
      expect(meaning, `kdp ${k.command} exited ${code}, which it does not document`).toBeDefined();
      covered.add(`${code} ${meaning!.meaning}`);
    }
    const missing: string[] = [];
    for (const c of COMMANDS) {
      for (const e of exitTable(c)) {
        if (covered.has(`${e.code} ${e.meaning}`)) continue;
        const other = ELSEWHERE.find((x) => x.command === c.name && x.code === e.code);
        if (other && (!other.test || readFileSync(at(other.test), 'utf8').includes(c.name.split(' ')[0]!))) continue;
        missing.push(`kdp ${c.name} exit ${e.code} (${e.meaning})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('an unknown command is a usage error', async () => {
    const io = captureIO();
    expect(await main(['no-such-command'], io)).toBe(2);
  });
});
