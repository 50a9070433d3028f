// What serving upstream's OpenAPI schemas costs (issue 20): the API server builds nothing at
// start (the data file is read on the first /openapi request or the first write with field
// validation); this measures that first use, piece by piece, the heap it keeps, the size of
// each answer, and the per-write unknown-field check.
//   node --expose-gc bin/run-ts.js bench/openapi-load.ts

import { statSync } from 'node:fs';
import { buildApiServer } from '../src/apiserver/app.js';
import { OPENAPI_DATA_FILE, readOpenApiData } from '../src/apiserver/openapi/data.js';
import { buildFieldChecker } from '../src/apiserver/openapi/unknown-fields.js';
import { buildOpenApiV2 } from '../src/apiserver/openapi/v2.js';
import { encodeOpenApiV2 } from '../src/apiserver/openapi/v2-proto.js';
import { buildOpenApiV3 } from '../src/apiserver/openapi/v3.js';
import { buildDefaultCatalog } from '../src/apiserver/resources.js';
import { GIT_VERSION } from '../src/apiserver/version.js';
import { buildMemoryStore } from '../src/store/index.js';
import { mib, report } from './lib-bench.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heap = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
const time = <T>(f: () => T): [T, number] => {
  const t0 = performance.now();
  const v = f();
  return [v, performance.now() - t0];
};

const catalog = buildDefaultCatalog();
report('data file (gzip)', statSync(OPENAPI_DATA_FILE).size / 1024, 'KiB');

const startNone = performance.now();
const plain = buildApiServer({ store: buildMemoryStore() });
await plain.app.ready();
report('API server build + ready (OpenAPI untouched)', performance.now() - startNone, 'ms');
await plain.close();

const h0 = heap();
const rss0 = process.memoryUsage().rss;
const [data, tRead] = time(() => readOpenApiData());
report('read + gunzip + parse the data', tRead, 'ms');
const h1 = heap();
report('heap kept by the parsed data', mib(h1 - h0), 'MiB');
const [v3, tV3] = time(() => buildOpenApiV3(data, catalog, GIT_VERSION));
report('build every v3 document (+ sha512)', tV3, 'ms');
const v3Bytes = [...v3.docs.values()].reduce((n, d) => n + d.body.length, 0);
report(`v3 documents (${v3.docs.size}) total`, v3Bytes / 1024, 'KiB');
report('v3 api/v1 document', v3.docs.get('api/v1')!.body.length / 1024, 'KiB');
const [v2, tV2] = time(() => buildOpenApiV2(data, catalog, GIT_VERSION));
const v2Json = Buffer.from(JSON.stringify(v2));
report('build the v2 document', tV2, 'ms');
report('v2 JSON', v2Json.length / 1024, 'KiB');
const [pb, tPb] = time(() => encodeOpenApiV2(v2));
report('encode v2 as gnostic protobuf', tPb, 'ms');
report('v2 protobuf', pb.length / 1024, 'KiB');
const h2 = heap();
report('heap kept with data + v3 + v2 (JSON and protobuf) built', mib(h2 - h0), 'MiB');
report('RSS growth meanwhile (includes the documents\' Buffers)',
  mib(process.memoryUsage().rss - rss0), 'MiB');

const [checker, tChk] = time(() => buildFieldChecker(data));
report('build the field checker', tChk, 'ms');
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }],
    env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } } }] } };
const N = 20_000;
const t0 = performance.now();
for (let i = 0; i < N; i++) checker.unknownFields('', 'v1', 'Pod', pod);
report('unknown-field check of a pod body', ((performance.now() - t0) * 1000) / N, 'us');

// First and later requests on a fresh server, as kubectl makes them.
const srv = buildApiServer({ store: buildMemoryStore() });
const get = async (url: string, accept = 'application/json') => {
  const t = performance.now();
  const r = await srv.app.inject({ method: 'GET', url, headers: { accept } });
  return [r.statusCode, performance.now() - t] as const;
};
report('first GET /openapi/v3 on a fresh server (loads and builds v3)', (await get('/openapi/v3'))[1], 'ms');
report('then GET /openapi/v3/api/v1', (await get('/openapi/v3/api/v1'))[1], 'ms');
report('first GET /openapi/v2 protobuf (builds v2 + encodes)',
  (await get('/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'))[1], 'ms');
report('then GET /openapi/v2 protobuf',
  (await get('/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'))[1], 'ms');
await srv.close();
