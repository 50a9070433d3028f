import { describe, expect, it } from 'vitest';
import { buildRecordingExec } from '../../src/host/fake-exec.js';
import { bridgeConf, cniEnv, invoke } from '../helpers/cni.js';

// Everything here fails (or answers) before the plugin touches the kernel, so a recording exec
// that must stay empty proves "no side effect".
async function run(env: Record<string, string>, conf: unknown = bridgeConf()) {
  const exec = buildRecordingExec();
  const out = await invoke(exec, 'kdp-t-node', env, conf);
  return { ...out, calls: exec.calls.length };
}

describe('CNI protocol', () => {
  it('VERSION prints one compact line with the supported versions and ignores stdin', async () => {
    const out = await run({ CNI_COMMAND: 'VERSION' }, 'not json');
    expect(out.exitCode).toBe(0);
    expect(out.stdout).toBe(
      '{"cniVersion":"1.1.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}\n',
    );
  });

  it('without CNI_COMMAND prints the about text on stderr and exits 0', async () => {
    const out = await run({});
    expect(out).toMatchObject({ exitCode: 0, stdout: '' });
    expect(out.stderr).toContain('CNI protocol versions supported: 0.1.0, 0.2.0');
  });

  it('rejects an unknown verb with code 4', async () => {
    const out = await run(cniEnv('FOO'));
    expect(out.json).toEqual({ code: 4, msg: 'unknown CNI_COMMAND: FOO' });
    expect(out.exitCode).toBe(1);
  });

  it('reports missing variables together, in variable order', async () => {
    const out = await run({ CNI_COMMAND: 'ADD' });
    expect(out.json).toEqual({
      code: 4,
      msg: 'required env variables [CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME,CNI_PATH] missing',
    });
  });

  it('does not require CNI_NETNS for DEL, nor container variables for GC and STATUS', async () => {
    const del = await run({ CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'x', CNI_IFNAME: 'eth0' });
    expect(del.json.msg).toBe('required env variables [CNI_PATH] missing');
    const status = await run({ CNI_COMMAND: 'STATUS' }, bridgeConf({ cniVersion: '1.1.0' }));
    expect(status.exitCode).toBe(0);
  });

  it.each([
    [{ CNI_CONTAINERID: 'bad/id' }, { code: 4, msg: 'invalid characters in containerID', details: 'bad/id' }],
    [{ CNI_IFNAME: 'eth0123456789abcdef' }, { code: 4, msg: 'interface name is too long', details: 'interface name should be less than 16 characters' }],
    [{ CNI_IFNAME: 'et/h' }, { code: 4, msg: 'interface name contains / or : or whitespace characters' }],
    [{ CNI_IFNAME: '.' }, { code: 4, msg: 'interface name is . or ..' }],
  ])('rejects bad variables %j', async (over, expected) => {
    const out = await run(cniEnv('ADD', over as Record<string, string>));
    expect(out.json).toEqual(expected);
    expect(out.calls).toBe(0);
  });

  it('rejects invalid JSON and empty stdin with code 6', async () => {
    expect((await run(cniEnv('ADD'), '{"name":')).json.code).toBe(6);
    expect((await run(cniEnv('ADD'), '')).json).toEqual({
      code: 6,
      msg: 'error unmarshall network config: unexpected end of JSON input',
    });
  });

  it('requires a valid network name (code 7)', async () => {
    const { name: _n, ...noName } = bridgeConf();
    expect((await run(cniEnv('ADD'), noName)).json).toEqual({ code: 7, msg: 'missing network name' });
    expect((await run(cniEnv('ADD'), bridgeConf({ name: 'bad name' }))).json.code).toBe(7);
  });

  it('refuses an unsupported cniVersion with the supported list', async () => {
    const out = await run(cniEnv('ADD'), bridgeConf({ cniVersion: '9.9.9' }));
    expect(out.json).toEqual({
      code: 1,
      msg: 'incompatible CNI versions',
      details: 'config is "9.9.9", plugin supports ["0.1.0" "0.2.0" "0.3.0" "0.3.1" "0.4.0" "1.0.0" "1.1.0"]',
    });
  });

  it.each([
    ['CHECK', '0.3.1'],
    ['GC', '1.0.0'],
    ['STATUS', '1.0.0'],
  ])('refuses %s with config version %s', async (verb, version) => {
    const out = await run(cniEnv(verb), bridgeConf({ cniVersion: version }));
    expect(out.json).toEqual({ code: 1, msg: `config version does not allow ${verb}` });
  });

  it('refuses hairpinMode with promiscMode before any kernel change', async () => {
    const out = await run(cniEnv('ADD'), bridgeConf({ promiscMode: true }));
    expect(out.json.msg).toBe('cannot set hairpin mode and promiscuous mode at the same time.');
    expect(out.calls).toBe(0);
  });

  it('prints errors as 4-space indented JSON without a trailing newline', async () => {
    const out = await run(cniEnv('FOO'));
    expect(out.stdout).toBe('{\n    "code": 4,\n    "msg": "unknown CNI_COMMAND: FOO"\n}');
  });
});

describe('CNI STATUS', () => {
  it('answers code 50 when the IPAM store cannot be written', async () => {
    const out = await run(cniEnv('STATUS'), bridgeConf({ cniVersion: '1.1.0' }, { dataDir: '/dev/null/x' }));
    expect(out.json.code).toBe(50);
  });
});

describe('CNI ADD with a namespace path that does not exist', () => {
  it('fails with the reference message before touching anything', async () => {
    const out = await run(cniEnv('ADD', { CNI_NETNS: '/var/run/netns/kdp-t-nonexistent' }));
    expect(out.json).toEqual({
      code: 999,
      msg: 'failed to open netns "/var/run/netns/kdp-t-nonexistent": failed to Statfs "/var/run/netns/kdp-t-nonexistent": no such file or directory',
    });
    expect(out.calls).toBe(0);
  });
});
