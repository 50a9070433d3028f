// Writes to subresources (status, scale) with values of the wrong type, identity changes and no
// rights: the same upstream answers as the main resource (a body that does not decode is 400
// naming the field; a patch result that does not decode is 422 on `patch`; a name that is not
// the URL's is 400; RBAC names the subresource, `deployments/status`).

import type { HostileCase, HostileTable } from '../cases.js';
import { APPS, CORE, expectAbsent, expectStored, KINDS, NS } from '../fixtures.js';

const MERGE = 'application/merge-patch+json';
const DEP = `${APPS}/deployments/sub-web`;
const POD = `${CORE}/pods/sub-pod`;
const SVC = `${CORE}/services/sub-svc`;
const NODE = '/api/v1/nodes/sub-node';
const scale = (replicas: unknown, name = 'sub-web') => ({ apiVersion: 'autoscaling/v1',
  kind: 'Scale', metadata: { name, namespace: NS }, spec: { replicas } });

const CASES: HostileCase[] = [
  { name: 'update of pods/status with podIP as a number', method: 'PUT', path: `${POD}/status`,
    body: { ...KINDS.Pod.make('sub-pod'), status: { podIP: 5 } },
    expect: { code: 400, reason: 'BadRequest', mentions: ['status.podIP'] } },
  { name: 'merge patch of deployments/status with replicas "x"', method: 'PATCH',
    path: `${DEP}/status`, contentType: MERGE, body: { status: { replicas: 'x' } },
    expect: { code: 422, reason: 'Invalid', field: 'patch' } },
  { name: 'merge patch of services/status with ingress as a string', method: 'PATCH',
    path: `${SVC}/status`, contentType: MERGE, body: { status: { loadBalancer: { ingress: 'x' } } },
    expect: { code: 422, reason: 'Invalid', field: 'patch' } },
  { name: 'merge patch of nodes/status with a capacity that is a list', method: 'PATCH',
    path: `${NODE}/status`, contentType: MERGE, body: { status: { capacity: { cpu: [1] } } },
    expect: { code: 422, reason: 'Invalid', field: 'patch' } },
  { name: 'merge patch of deployments/status renaming it', method: 'PATCH',
    path: `${DEP}/status`, contentType: MERGE, body: { metadata: { name: 'other' } },
    expect: { code: 400, reason: 'BadRequest', mentions: ['name'] } },
  { name: 'update of deployments/scale with replicas 1.5', method: 'PUT', path: `${DEP}/scale`,
    body: scale(1.5), expect: { code: 400, reason: 'BadRequest', mentions: ['replicas'] } },
  { name: 'merge patch of deployments/scale with replicas "x"', method: 'PATCH',
    path: `${DEP}/scale`, contentType: MERGE, body: { spec: { replicas: 'x' } },
    expect: { code: 422, reason: 'Invalid', field: 'patch' } },
  { name: 'merge patch of deployments/scale with replicas 2^31', method: 'PATCH',
    path: `${DEP}/scale`, contentType: MERGE, body: { spec: { replicas: 2 ** 31 } },
    expect: { code: 422, reason: 'Invalid', field: 'patch' } },
  { name: 'nobody patches deployments/status', method: 'PATCH', path: `${DEP}/status`,
    as: 'nobody', contentType: MERGE, body: { status: { replicas: 1 } },
    expect: { code: 403, reason: 'Forbidden',
      mentions: ['cannot patch resource "deployments/status"'] } },
  { name: 'update of pods/status of a pod that does not exist', method: 'PUT',
    path: `${CORE}/pods/sub-none/status`, body: { ...KINDS.Pod.make('sub-none'), status: {} },
    expect: { code: 404, reason: 'NotFound' },
    after: (h) => expectAbsent(h, `${CORE}/pods/sub-none`) },
  { name: 'merge patch of deployments/scale to 2 (control)', method: 'PATCH',
    path: `${DEP}/scale`, contentType: MERGE, body: { spec: { replicas: 2 } },
    expect: { ok: 200, writes: true } },
];

export const SUBRESOURCES_TABLE: HostileTable = {
  fixtures: [
    { path: `${APPS}/deployments`, body: KINDS.Deployment.make('sub-web') },
    { path: `${CORE}/pods`, body: KINDS.Pod.make('sub-pod') },
    { path: `${CORE}/services`, body: KINDS.Service.make('sub-svc') },
    { path: '/api/v1/nodes', body: { metadata: { name: 'sub-node' } } },
  ],
  cases: CASES.map((c) => c.after ? c : { ...c, after: (h) => expectStored(h,
    c.path.replace(/\/(status|scale)$/, '')) }),
};
