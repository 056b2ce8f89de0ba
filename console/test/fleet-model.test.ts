import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { fleetModel } from '../src/model/fleet';
import type { ControlPlaneUpdateStatus } from '../src/k8s';
import { NOW, health, pool } from './fixtures';

const copy = (ns: string, assessment: string, completion: number, reported?: string): ControlPlaneUpdateStatus => ({
  metadata: {
    name: ns,
    namespace: ns,
    labels: { 'open-cluster-management.io/cluster-name': ns },
    annotations: reported ? { 'update.openshift.io/last-reported': reported } : undefined,
  },
  status: { assessment, completionPercent: completion, versions: { previous: '4.17.12', target: '4.18.3' } },
});

test('rows worst first, as --fleet orders them', () => {
  const inNs = <T extends { metadata?: { namespace?: string } }>(o: T, ns: string): T => ({ ...o, metadata: { ...o.metadata, namespace: ns } });
  const rows = fleetModel(
    {
      controlPlanes: [
        copy('done', 'Completed', 100, '2024-02-27T16:15:00Z'),
        copy('slow', 'Progressing - Slow', 40, '2024-02-27T16:15:00Z'),
        copy('busy-b', 'Progressing', 60, '2024-02-27T16:15:00Z'),
        copy('busy-a', 'Progressing', 60, '2024-02-27T16:15:00Z'),
        copy('stale', 'Completed', 100, '2024-02-27T15:00:00Z'),
        copy('broken', 'Completed', 100, '2024-02-27T16:15:00Z'),
      ],
      pools: [inNs(pool('worker', { assessment: 'Degraded' }), 'busy-b')],
      health: [inNs(health('h', 'Error', '2024-02-27T16:00:00Z', 'x'), 'broken')],
      addons: [
        { metadata: { name: 'update-status', namespace: 'silent' }, status: { conditions: [{ type: 'Available', status: 'Unknown' }] } },
        {
          metadata: { name: 'update-status', namespace: 'done' },
          status: {
            conditions: [
              { type: 'Available', status: 'True' },
              { type: 'Degraded', status: 'True', reason: 'PrometheusUnreachable', message: 'cannot read alerts' },
            ],
          },
        },
      ],
    },
    NOW,
  );
  assert.deepEqual(
    rows.map((r) => r.cluster),
    ['broken', 'silent', 'stale', 'slow', 'busy-b', 'busy-a', 'done'],
  );
  const by = Object.fromEntries(rows.map((r) => [r.cluster, r]));
  assert.equal(by.stale.freshness, 'Stale');
  assert.equal(by.stale.lastReport, 'Stale (76m)');
  assert.equal(by.done.lastReport, '73s');
  assert.equal(by.silent.reported, false);
  assert.equal(by.silent.lastReport, '-');
  assert.equal(by.done.agent?.degraded?.message, 'cannot read alerts');
  assert.equal(by.broken.health.error, 1);
  assert.deepEqual(by['busy-b'].poolsNotCompleted, [{ name: 'worker', assessment: 'Degraded' }]);
});

test('a copy without a heartbeat is <unknown>; no ACM: rows from the copies alone', () => {
  const rows = fleetModel({ controlPlanes: [copy('old-agent', 'Progressing', 10)], pools: [], health: [] }, NOW);
  assert.equal(rows[0].lastReport, '<unknown>');
  assert.equal(rows[0].freshness, 'Unknown');
  assert.equal(rows[0].agent, undefined);
});
