// The plugin's verbs are one dispatch table (as skel.PluginMain's CNIFuncs): every command the
// environment parser accepts, VERSION aside, has exactly one handler, and the version gates of
// CHECK, GC and STATUS are the table's, not scattered checks.

import { describe, expect, it } from 'vitest';
import { CNI_VERBS, runCniPlugin } from '../../src/cni/plugin.js';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { bridgeConf, cniEnv } from '../helpers/cni.js';

describe('the CNI verb table', () => {
  it('has one handler per verb, with the spec\'s version gates', () => {
    expect(Object.keys(CNI_VERBS).sort()).toEqual(['ADD', 'CHECK', 'DEL', 'GC', 'STATUS']);
    expect(Object.fromEntries(Object.entries(CNI_VERBS).map(([k, v]) => [k, v.since ?? null])))
      .toEqual({ ADD: null, DEL: null, CHECK: 'CHECK', GC: 'GC', STATUS: 'STATUS' });
  });

  it.each([['CHECK', '0.3.1'], ['GC', '1.0.0'], ['STATUS', '1.0.0']])('%s with a %s config is refused (code 1)', async (verb, v) => {
    const out = await runCniPlugin({ env: cniEnv(verb), stdin: JSON.stringify(bridgeConf({ cniVersion: v })) },
      { exec: buildRecordingExec(), node: {} });
    expect(out.exitCode).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ code: 1, msg: `config version does not allow ${verb}` });
  });
});
