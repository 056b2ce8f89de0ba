import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { cellState, clusterModel, sortHealth, tile } from '../src/model/cluster';
import { NOW, controlPlane, health, node, operator, pool } from './fixtures';

test('a node’s cell follows its assessment and phase, as the web view’s', () => {
  assert.equal(cellState(node('a', 'worker', 'Completed', 'Updated')), 'updated');
  assert.equal(cellState(node('a', 'worker', 'Outdated', 'Pending')), 'pending');
  assert.equal(cellState(node('a', 'worker', 'Progressing', 'Draining')), 'draining');
  assert.equal(cellState(node('a', 'worker', 'Progressing', 'Rebooting')), 'rebooting');
  assert.equal(cellState(node('a', 'worker', 'Progressing')), 'updating');
  assert.equal(cellState(node('a', 'worker', 'Degraded', 'Draining')), 'degraded');
  assert.equal(cellState(node('a', 'worker', 'Unavailable')), 'unavailable');
  assert.equal(cellState(node('a', 'worker', 'Excluded', 'Paused')), 'excluded');
  assert.equal(cellState(node('a', 'worker', 'Something new')), 'unknown');
  assert.equal(cellState({ status: {} }), 'unknown');
});

test('an operator’s tile: unavailable and degraded win, with their message', () => {
  assert.deepEqual(tile(operator('dns', 'Updated')), { name: 'dns', state: 'updated', version: '4.17.12 → 4.18.3', message: '' });
  assert.equal(tile(operator('etcd', 'Updating', [{ type: 'Updating', status: 'True', message: 'rolling' }]))?.message, 'rolling');
  const t = tile(operator('ingress', 'Updating', [{ type: 'Degraded', status: 'True', message: 'broken router' }]));
  assert.equal(t?.state, 'degraded');
  assert.equal(t?.message, 'broken router');
  assert.equal(tile(operator('auth', 'Updated', [{ type: 'Available', status: 'False', message: 'down' }]))?.state, 'unavailable');
});

test('health: most severe first, then the newest', () => {
  const rows = sortHealth(
    [
      health('a', 'Warning', '2024-02-27T16:00:00Z', 'w old'),
      health('b', 'Error', '2024-02-27T15:00:00Z', 'e old'),
      health('c', 'Warning', '2024-02-27T16:10:00Z', 'w new'),
      health('d', 'Critical', '2024-02-27T14:00:00Z', 'c'),
    ].map((i) => clusterModel({ pools: [], operators: [], nodes: [], health: [i] }, NOW).health[0]),
  );
  assert.deepEqual(
    rows.map((r) => r.summary),
    ['c', 'e old', 'w new', 'w old'],
  );
});

test('the model: control plane, the master pool first, pools, cells, health and estimates', () => {
  const m = clusterModel(
    {
      controlPlane: controlPlane(),
      pools: [pool('infra'), pool('worker', { assessment: 'Degraded' })],
      operators: [operator('b-op', 'Updated'), operator('a-op', 'Updating')],
      nodes: [
        node('w-2', 'worker', 'Degraded', 'Draining'),
        node('w-1', 'worker', 'Completed', 'Updated'),
        node('m-1', 'master', 'Progressing', 'Rebooting'),
        node('i-1', 'infra', 'Outdated', 'Pending'),
      ],
      health: [
        health('pdb', 'Error', '2024-02-27T16:00:00Z', 'Node worker-3 is degraded', {
          reference: 'javascript:alert(1)',
          related: [{ group: 'policy', kind: 'PodDisruptionBudget', namespace: 'shop', name: 'checkout-pdb' }],
        }),
      ],
      history: {
        status: {
          estimates: {
            method: 'Learned',
            message: 'from 3 updates',
            computedAt: '2024-02-27T16:16:13Z',
            update: {
              estimatedCompletionTime: '2024-02-27T17:21:43Z',
              earliestCompletionTime: '2024-02-27T16:56:13Z',
              latestCompletionTime: '2024-02-27T18:16:13Z',
            },
          },
        },
      },
    },
    NOW,
  );
  assert.equal(m.updating, true);
  assert.equal(m.controlPlane?.completion, 97);
  assert.equal(m.controlPlane?.duration, '1h5m30s');
  assert.deepEqual(
    m.controlPlane?.tiles.map((t) => t.name),
    ['a-op', 'b-op'],
  );
  assert.deepEqual(
    m.pools.map((p) => [p.name, p.controlPlane, p.nodes.map((n) => `${n.name}:${n.state}`).join(' ')]),
    [
      ['master', true, 'm-1:rebooting'],
      ['worker', false, 'w-1:updated w-2:degraded'],
      ['infra', false, 'i-1:pending'],
    ],
  );
  const h = m.health[0];
  assert.equal(h.since, '16m13s');
  assert.equal(h.referenceUrl, undefined, 'a javascript: reference is no link');
  assert.equal(h.referenceText, 'javascript:alert(1)');
  assert.deepEqual(h.related, ['PodDisruptionBudget.policy shop/checkout-pdb']);
  assert.deepEqual(m.estimates, {
    method: 'learned',
    message: 'from 3 updates',
    items: [{ scope: 'Whole update', median: '1h5m30s', earliest: '40m', latest: '2h', paused: false }],
  });
});

test('no ControlPlaneUpdateStatus: nothing to show, no crash on empty objects', () => {
  const m = clusterModel({ pools: [{}], operators: [{}], nodes: [{}], health: [{}] }, NOW);
  assert.equal(m.controlPlane, undefined);
  assert.equal(m.updating, false);
  assert.deepEqual(m.health, []);
});

test('5,000 nodes: the model is computed in well under 100 ms', () => {
  const nodes = Array.from({ length: 5000 }, (_, i) =>
    node(`worker-${String(i).padStart(5, '0')}`, i % 2 ? 'worker' : 'infra', i % 7 ? 'Completed' : 'Progressing', 'Draining'),
  );
  const t0 = performance.now();
  const m = clusterModel({ controlPlane: controlPlane(), pools: [pool('worker'), pool('infra')], operators: [], nodes, health: [] }, NOW);
  const ms = performance.now() - t0;
  assert.equal(m.pools.reduce((n, p) => n + p.nodes.length, 0), 5000);
  assert.ok(ms < 100, `${ms} ms`);
});
