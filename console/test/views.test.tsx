// The views rendered to markup (react-dom/server): poisoned strings stay text, no link but
// https, the facts the e2e test reads are there.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { ClusterView } from '../src/components/ClusterView';
import { FleetView } from '../src/components/FleetView';
import { clusterModel } from '../src/model/cluster';
import { fleetModel } from '../src/model/fleet';
import { NOW, controlPlane, health, node, operator, pool } from './fixtures';

const POISON = '<img src=x onerror="window.__pwned=1">\u202eevil';

test('a poisoned cluster renders as text: no element, no handler, bidi visible', () => {
  const model = clusterModel(
    {
      controlPlane: controlPlane({ versions: { target: `4.18.3${POISON}` } }),
      pools: [pool(`worker${POISON}`)],
      operators: [operator(`op${POISON}`, 'Updating', [{ type: 'Degraded', status: 'True', message: POISON }])],
      nodes: [node(`node${POISON}`, `worker${POISON}`, 'Degraded')],
      health: [
        health('h1', 'Error', '2024-02-27T16:00:00Z', POISON, {
          description: `<script>window.__pwned=2</script>`,
          reference: 'javascript:window.__pwned=3',
        }),
        health('h2', 'Warning', '2024-02-27T16:00:00Z', 'ok', { reference: 'https://docs.example/runbook' }),
      ],
    },
    NOW,
  );
  const html = renderToStaticMarkup(<ClusterView model={model} title={`ns${POISON}`} />);
  assert.ok(!/<img/i.test(html), 'no img element');
  assert.ok(!/<script/i.test(html), 'no script element');
  assert.ok(!/href="javascript:/i.test(html), 'no javascript: link');
  assert.ok(html.includes('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;\\u202eevil'), 'the markup shows as text, the bidi override visible');
  assert.ok(html.includes('href="https://docs.example/runbook"'), 'an https reference is a link');
  assert.ok(html.includes('data-node="node&lt;img'), 'the node cell carries its name as an attribute value');
});

test('the cluster view shows the control plane, pools and health', () => {
  const model = clusterModel(
    {
      controlPlane: controlPlane(),
      pools: [pool('worker')],
      operators: [operator('dns', 'Updated')],
      nodes: [node('m-1', 'master', 'Completed', 'Updated'), node('w-1', 'worker', 'Progressing', 'Draining')],
      health: [],
    },
    NOW,
  );
  const html = renderToStaticMarkup(<ClusterView model={model} title="openshift-update-status" />);
  assert.match(html, /data-fact="ops-updated">33</);
  assert.match(html, /data-pool="master"/);
  assert.match(html, /data-node="w-1" data-state="draining"/);
  assert.match(html, /Update is proceeding well/);
});

test('the fleet view lists the rows in order, each cluster a button to its view', () => {
  const rows = fleetModel(
    {
      controlPlanes: [
        { metadata: { name: 'b', namespace: 'b' }, status: { assessment: 'Completed', completionPercent: 100 } },
        { metadata: { name: 'a', namespace: 'a' }, status: { assessment: 'Stalled', completionPercent: 20 } },
      ],
      pools: [],
      health: [],
    },
    NOW,
  );
  const html = renderToStaticMarkup(<FleetView rows={rows} onOpen={() => undefined} />);
  assert.ok(html.indexOf('data-cluster="a"') < html.indexOf('data-cluster="b"'));
  assert.match(html, /data-open="a"/);
});

test('5,000 node cells render in well under a second', () => {
  const nodes = Array.from({ length: 5000 }, (_, i) => node(`w-${i}`, 'worker', 'Completed', 'Updated'));
  const model = clusterModel({ controlPlane: controlPlane(), pools: [pool('worker')], operators: [], nodes, health: [] }, NOW);
  const t0 = performance.now();
  const html = renderToStaticMarkup(<ClusterView model={model} title="big" />);
  const ms = performance.now() - t0;
  assert.equal(html.match(/data-node=/g)?.length, 5000);
  assert.ok(ms < 1000, `${ms} ms`);
});
