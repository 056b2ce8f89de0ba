// Objects shaped as the controller writes them (docs/api.md), for the model and view tests.
import type { ControlPlaneUpdateStatus, UpdateInsight, WorkerPoolUpdateStatus } from '../src/k8s';

export const NOW = new Date('2024-02-27T16:16:13Z');

export const controlPlane = (over: Partial<NonNullable<ControlPlaneUpdateStatus['status']>> = {}): ControlPlaneUpdateStatus => ({
  metadata: { name: 'cluster', namespace: 'openshift-update-status' },
  status: {
    assessment: 'Progressing',
    versions: { target: '4.18.3', previous: '4.17.12' },
    completionPercent: 97,
    startedAt: '2024-02-27T15:10:43Z',
    operators: { total: 34, updated: 33, updating: 1, waiting: 0, healthy: 34, degraded: 0, unavailable: 0 },
    nodes: { total: 3, updated: 1, outdated: 2, available: 3 },
    healthInsights: { warning: 1 },
    ...over,
  },
});

export const pool = (name: string, over: Partial<NonNullable<WorkerPoolUpdateStatus['status']>> = {}): WorkerPoolUpdateStatus => ({
  metadata: { name, namespace: 'openshift-update-status' },
  status: {
    resource: { group: 'machineconfiguration.openshift.io', kind: 'MachineConfigPool', name },
    assessment: 'Progressing',
    completionPercent: 50,
    nodes: { total: 2, updated: 1, outdated: 1, available: 2, progressing: 1 },
    ...over,
  },
});

export const node = (name: string, poolName: string, assessment: string, phase?: string): UpdateInsight => ({
  metadata: { name: `node-${name}`, labels: { 'update.openshift.io/pool': poolName } },
  status: {
    type: 'Progress',
    resource: { group: '', kind: 'Node', name },
    scope: { type: poolName === 'master' ? 'ControlPlane' : 'WorkerPool', pool: poolName },
    progress: { assessment, phase, version: { current: '4.17.12', target: '4.18.3' } },
  },
});

export const operator = (name: string, assessment: string, conditions: { type: string; status: string; message?: string }[] = []): UpdateInsight => ({
  metadata: { name: `clusteroperator-${name}` },
  status: {
    type: 'Progress',
    resource: { group: 'config.openshift.io', kind: 'ClusterOperator', name },
    scope: { type: 'ControlPlane' },
    progress: { assessment, version: { current: '4.17.12', target: '4.18.3' }, conditions },
  },
});

export const health = (
  name: string,
  level: string,
  startedAt: string,
  summary: string,
  extra: { description?: string; reference?: string; related?: { kind: string; name: string; group?: string; namespace?: string }[] } = {},
): UpdateInsight => ({
  metadata: { name },
  status: {
    type: 'Health',
    resource: { group: '', kind: 'Node', name: 'worker-3' },
    scope: { type: 'WorkerPool', pool: 'worker' },
    health: {
      startedAt,
      impact: { level, type: 'Update Stalled', summary, description: extra.description },
      remediation: extra.reference === undefined ? undefined : { reference: extra.reference },
      related: extra.related,
    },
  },
});
