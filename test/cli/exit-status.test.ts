// Exit statuses scripts can branch on: bad flags, config or input exit 2 everywhere; `kdp trace`
// keeps 1 for "dropped or rejected" only, so an error is never read as a verdict.

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kdp } from '../helpers/cli.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
const DUMP = fixture('foreign-kind-node.iptables-save');

describe('kdp trace exit status', () => {
  it('is 1 for a packet that is rejected', async () => {
    const r = await kdp('trace', '--rules', DUMP, '--node-ip', '172.19.0.3', '10.244.0.5',
      '10.96.200.15:80');
    expect(r.code).toBe(1);
  });

  it.each([
    ['a destination that is not an address', ['10.244.0.5', 'not-an-ip:80']],
    ['a port out of range', ['10.244.0.5', '10.96.0.10:70000']],
    ['a missing port', ['10.244.0.5', '10.96.0.10']],
    ['an unknown protocol', ['--proto', 'gre', '10.244.0.5', '10.96.0.10:53']],
    ['a missing argument', ['10.244.0.5']],
  ])('is 2 for %s', async (_what, extra) => {
    const r = await kdp('trace', '--rules', DUMP, '--node-ip', '172.19.0.3', ...extra);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/^error \[KDP_/);
  });

  it('is 2 for a rules file that cannot be read', async () => {
    const r = await kdp('trace', '--rules', '/nonexistent/dump', '10.244.0.5', '10.96.0.10:53');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/KDP_INPUT.*\/nonexistent\/dump: cannot read/);
  });

  it('is 2 for a dump line that does not parse', async () => {
    const r = await kdp('trace', '--rules', fixture('broken.iptables-save'), '10.244.0.5',
      '10.96.0.10:53');
    expect(r.code).toBe(2);
  });

  it('is 2 when no cluster runs for the data directory', async () => {
    const r = await kdp('trace', '--data-dir', '/nonexistent/kdp', 'a/b', '10.96.0.10:53');
    expect(r.code).toBe(2);
  });
});

describe('input errors exit 2 in every command', () => {
  it('kdp rules compile with an unreadable --config file', async () => {
    const r = await kdp('rules', 'compile', '-f', DUMP, '--config', '/nonexistent/kp.yaml');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/KDP_INPUT/);
  });
});
