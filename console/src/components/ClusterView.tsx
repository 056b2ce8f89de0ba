// The cluster's update, drawn from its model (pure: props in, markup out; no watch, no
// fetch). Every string from the cluster goes through `vis`/`visLine` and is inserted by React
// as text.

import * as React from 'react';
import { Alert, Card, CardBody, CardTitle, Progress, Title } from '@patternfly/react-core';
import type { ClusterModel, ControlPlane, Estimates, Tile } from '../model/cluster';
import { vis, visLine } from '../escape';
import { utc } from '../format';
import { Assessment } from './Assessment';
import { HealthTable } from './HealthTable';
import { NodeGrid, Legend } from './NodeGrid';

const Tiles: React.FC<{ tiles: Tile[] }> = ({ tiles }) => (
  <ul className="us-tiles" aria-label="Cluster operators">
    {tiles.map((t) => (
      <li key={t.name} className={`us-tile us-op-${t.state}`} data-operator={t.name} data-state={t.state}>
        <span className="us-tile-name">{visLine(t.name)}</span>
        <span className="us-tile-state">{t.state}</span>
        {t.version && <span className="us-tile-version">{visLine(t.version)}</span>}
        {t.message && <span className="us-msg us-tile-msg">{vis(t.message)}</span>}
      </li>
    ))}
  </ul>
);

const EstimatesBlock: React.FC<{ e: Estimates }> = ({ e }) => (
  <div className="us-estimates" data-fact="estimates">
    <Title headingLevel="h3" size="md">
      Estimated time remaining ({e.method})
    </Title>
    <dl className="us-facts">
      {e.items.map((r) => (
        <React.Fragment key={r.scope}>
          <dt>{visLine(r.scope)}</dt>
          <dd data-estimate={r.scope}>
            {r.median} (between {r.earliest} and {r.latest}){r.paused ? ', if resumed now' : ''}
          </dd>
        </React.Fragment>
      ))}
    </dl>
    {e.message && <p className="us-msg us-muted">{vis(e.message)}</p>}
  </div>
);

const ControlPlaneCard: React.FC<{ cp: ControlPlane; estimates?: Estimates }> = ({ cp, estimates }) => {
  const o = cp.operators;
  return (
    <Card className="us-card" data-section="control-plane">
      <CardTitle>
        <Title headingLevel="h2" size="lg">
          Control plane <Assessment value={cp.assessment} />
        </Title>
      </CardTitle>
      <CardBody>
        <dl className="us-facts">
          <dt>Target version</dt>
          <dd data-fact="target">
            {visLine(cp.target)}
            {cp.previous ? ` (from ${visLine(cp.previous)})` : ''}
          </dd>
          <dt>Started</dt>
          <dd>{utc(cp.startedAt)}</dd>
          {cp.completedAt && (
            <>
              <dt>Completed</dt>
              <dd>{utc(cp.completedAt)}</dd>
            </>
          )}
          <dt>Duration</dt>
          <dd>{cp.duration}</dd>
          <dt>Operators</dt>
          <dd>
            <span data-fact="ops-updated">{o.updated ?? 0}</span> of <span data-fact="ops-total">{o.total ?? 0}</span>{' '}
            updated, <span data-fact="ops-updating">{o.updating ?? 0}</span> updating,{' '}
            <span data-fact="ops-waiting">{o.waiting ?? 0}</span> waiting; {o.healthy ?? 0} healthy,{' '}
            {o.degraded ?? 0} degraded, {o.unavailable ?? 0} unavailable
          </dd>
        </dl>
        <Progress
          value={cp.completion}
          title="Control plane completion"
          aria-label="Control plane completion"
          data-fact="cp-completion"
          data-value={cp.completion}
        />
        {estimates && <EstimatesBlock e={estimates} />}
        <Tiles tiles={cp.tiles} />
      </CardBody>
    </Card>
  );
};

export type ClusterViewProps = {
  model: ClusterModel;
  /** What the page is about (a namespace, a managed cluster). */
  title: string;
  /** Watches that failed: shown, the last good data stays. */
  errors?: string[];
};

export const ClusterView: React.FC<ClusterViewProps> = ({ model, title, errors }) => (
  <div className="us-page" data-view="cluster">
    <Title headingLevel="h1">Cluster update: {visLine(title)}</Title>
    {(errors ?? []).map((e) => (
      <Alert key={e} variant="warning" isInline title="Cannot read everything">
        {vis(e)}
      </Alert>
    ))}
    {!model.controlPlane && (
      <Alert variant="info" isInline title="No update status yet">
        No ControlPlaneUpdateStatus: update-status has not reported on this cluster yet.
      </Alert>
    )}
    {model.controlPlane && !model.updating && (
      <p data-fact="not-updating">
        The update to {visLine(model.controlPlane.target)} is complete: the cluster is not updating.
      </p>
    )}
    {model.controlPlane && <ControlPlaneCard cp={model.controlPlane} estimates={model.estimates} />}
    {model.pools.length > 0 && (
      <Card className="us-card" data-section="pools">
        <CardTitle>
          <Title headingLevel="h2" size="lg">
            Nodes
          </Title>
        </CardTitle>
        <CardBody>
          <Legend />
          {model.pools.map((p) => (
            <NodeGrid key={p.name} pool={p} />
          ))}
        </CardBody>
      </Card>
    )}
    <Card className="us-card" data-section="health">
      <CardTitle>
        <Title headingLevel="h2" size="lg">
          Update health
        </Title>
      </CardTitle>
      <CardBody>
        <HealthTable rows={model.health} />
      </CardBody>
    </Card>
  </div>
);
