// One bar per pool and one cell per node. A cell is a small element with the node's state as
// its class and its name and state in its label; at 5,000 nodes a pool re-renders only when
// its cells change (React.memo on the pool's model).

import * as React from 'react';
import { Progress, Title } from '@patternfly/react-core';
import { CELL_STATES, type CellState, type Pool } from '../model/cluster';
import { visLine } from '../escape';
import { Assessment } from './Assessment';

export const STATE_LABEL: Record<CellState, string> = {
  updated: 'Updated',
  pending: 'Pending',
  draining: 'Draining',
  updating: 'Updating',
  rebooting: 'Rebooting',
  excluded: 'Excluded (paused pool)',
  degraded: 'Degraded',
  unavailable: 'Unavailable',
  unknown: 'Unknown',
};

export const Legend: React.FC = () => (
  <ul className="us-legend" aria-label="Legend">
    {CELL_STATES.map((s) => (
      <li key={s}>
        <span className={`us-cell us-st-${s}`} aria-hidden="true" />
        {STATE_LABEL[s]}
      </li>
    ))}
  </ul>
);

const counts = (p: Pool): string => {
  const n = p.counts;
  return `${n.total ?? 0} Total, ${n.available ?? 0} Available, ${n.progressing ?? 0} Progressing, ${
    n.outdated ?? 0
  } Outdated, ${n.draining ?? 0} Draining, ${n.excluded ?? 0} Excluded, ${n.degraded ?? 0} Degraded`;
};

const Cells: React.FC<{ pool: Pool }> = React.memo(
  ({ pool }) => (
    <div className="us-grid" role="list" aria-label={`Nodes of pool ${visLine(pool.name)}`} data-grid={pool.name}>
      {pool.nodes.map((c) => (
        <span
          key={c.name}
          role="listitem"
          className={`us-cell us-st-${c.state}`}
          data-node={c.name}
          data-state={c.state}
          title={`${visLine(c.name)}: ${STATE_LABEL[c.state]}${c.version ? ` (${visLine(c.version)})` : ''}`}
          aria-label={`${visLine(c.name)}: ${STATE_LABEL[c.state]}`}
        />
      ))}
    </div>
  ),
  (a, b) =>
    a.pool.nodes.length === b.pool.nodes.length &&
    a.pool.nodes.every((c, i) => c.name === b.pool.nodes[i].name && c.state === b.pool.nodes[i].state && c.version === b.pool.nodes[i].version),
);

export const NodeGrid: React.FC<{ pool: Pool }> = ({ pool }) => (
  <section className="us-pool" data-pool={pool.name} aria-label={`Pool ${visLine(pool.name)}`}>
    <Title headingLevel="h3" size="md">
      {pool.controlPlane ? 'Control plane nodes' : `Worker pool ${visLine(pool.name)}`}{' '}
      <Assessment value={pool.assessment} />
      {pool.paused && <span className="us-muted"> (paused)</span>}
    </Title>
    <Progress
      value={pool.completion}
      title={`${pool.updated} of ${pool.total} nodes updated`}
      aria-label={`Pool ${visLine(pool.name)} completion`}
      data-fact="pool-completion"
      data-value={pool.completion}
    />
    <p className="us-muted" data-fact="pool-status">
      {counts(pool)}
    </p>
    <Cells pool={pool} />
  </section>
);
