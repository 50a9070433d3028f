import { describe, expect, it } from 'vitest';
import { ipvsPipeline, realsOf, service, slice, stateOf } from './ipvs-fixtures.js';

const svc = (protocol = 'TCP') => service('web', {
  clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80, protocol, targetPort: 8080 }],
});

describe('ipvs terminating endpoints and graceful termination', () => {
  it('only serving-terminating endpoints are used as real servers with weight 1', () => {
    const { pipeline } = ipvsPipeline([svc(), slice('web', [
      { ip: '10.244.1.5', ready: false, serving: true, terminating: true },
      { ip: '10.244.1.6', ready: false, serving: false, terminating: true },
    ])]);
    expect(realsOf(stateOf(pipeline.sync()), '10.96.0.20:80')).toEqual(['10.244.1.5:8080 w=1']);
  });

  it('terminating endpoints are not used while a ready one exists', () => {
    const { pipeline } = ipvsPipeline([svc(), slice('web', [
      { ip: '10.244.1.5', ready: false, serving: true, terminating: true },
      { ip: '10.244.1.7' },
    ])]);
    expect(realsOf(stateOf(pipeline.sync()), '10.96.0.20:80')).toEqual(['10.244.1.7:8080 w=1']);
  });

  it('a removed TCP real server with connections is quiesced to weight 0 and kept', () => {
    const { pipeline, proxier } = ipvsPipeline(
      [svc(), slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }])], undefined,
      { connections: (_vs, rs) => (rs === '10.244.1.6:8080' ? 3 : 0) });
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }]));
    const state = stateOf(pipeline.sync());
    expect(realsOf(state, '10.96.0.20:80')).toEqual(['10.244.1.5:8080 w=1', '10.244.1.6:8080 w=0']);
    expect(proxier.lastOperations()).toEqual(['-e -t 10.96.0.20:80 -r 10.244.1.6:8080 -m -w 0']);
  });

  it('a quiesced real server is deleted by the periodic pass once its connections end', () => {
    let conns = 3;
    const { pipeline, proxier } = ipvsPipeline(
      [svc(), slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }])], undefined,
      { connections: () => conns });
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }]));
    pipeline.sync();
    pipeline.commit(true);
    expect(proxier.flushGracefulTermination()).toEqual([]);
    conns = 0;
    expect(proxier.flushGracefulTermination()).toEqual(['-d -t 10.96.0.20:80 -r 10.244.1.6:8080']);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.9' }]));
    expect(realsOf(stateOf(pipeline.sync()), '10.96.0.20:80'))
      .toEqual(['10.244.1.5:8080 w=1', '10.244.1.9:8080 w=1']);
  });

  it('a quiesced real server that comes back is deleted and re-added with weight 1', () => {
    const { pipeline, proxier } = ipvsPipeline(
      [svc(), slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }])], undefined,
      { connections: () => 1 });
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }]));
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }]));
    const state = stateOf(pipeline.sync());
    expect(realsOf(state, '10.96.0.20:80')).toEqual(['10.244.1.5:8080 w=1', '10.244.1.6:8080 w=1']);
    expect(proxier.lastOperations()).toEqual([
      '-d -t 10.96.0.20:80 -r 10.244.1.6:8080',
      '-a -t 10.96.0.20:80 -r 10.244.1.6:8080 -m -w 1',
    ]);
  });

  it('UDP real servers are deleted at once even with connections', () => {
    const { pipeline, proxier } = ipvsPipeline(
      [svc('UDP'), slice('web', [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }], 'UDP')], undefined,
      { connections: () => 5 });
    pipeline.sync();
    pipeline.commit(true);
    pipeline.onEndpointSlice(slice('web', [{ ip: '10.244.1.5' }], 'UDP'));
    expect(realsOf(stateOf(pipeline.sync()), '10.96.0.20:80')).toEqual(['10.244.1.5:8080 w=1']);
    expect(proxier.lastOperations()).toEqual(['-d -u 10.96.0.20:80 -r 10.244.1.6:8080']);
  });
});
