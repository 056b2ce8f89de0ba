// Exposed module `FleetPage`: on the hub, in ACM's perspective, every cluster's update from the
// hub copies the agents write (one namespace per managed cluster), worst first; choosing a
// cluster opens its update from the same copies.

import * as React from 'react';
import { Button, PageSection } from '@patternfly/react-core';
import {
  ADDON,
  ADDON_NAME,
  CONTROL_PLANE,
  INSIGHT,
  LABEL,
  WORKER_POOL,
  type ControlPlaneUpdateStatus,
  type ManagedClusterAddOn,
  type UpdateInsight,
  type WorkerPoolUpdateStatus,
} from '../k8s';
import { fleetModel, type FleetRow } from '../model/fleet';
import { ClusterUpdate } from './ClusterUpdate';
import { FleetView } from './FleetView';
import { useList, useNow } from './watches';
import '../styles.css';

const copies = { matchExpressions: [{ key: LABEL.cluster, operator: 'Exists' }] };

const Fleet: React.FC<{ onOpen: (r: FleetRow) => void }> = ({ onOpen }) => {
  const cps = useList<ControlPlaneUpdateStatus>(CONTROL_PLANE, { selector: copies });
  const pools = useList<WorkerPoolUpdateStatus>(WORKER_POOL, { selector: copies });
  const health = useList<UpdateInsight>(INSIGHT, {
    selector: { ...copies, matchLabels: { [LABEL.insightType]: 'health' } },
  });
  // Not an ACM hub (no such kind), or not allowed: the rows come from the copies alone.
  const addons = useList<ManagedClusterAddOn>(ADDON, { fieldSelector: `metadata.name=${ADDON_NAME}` });
  const now = useNow(5000);
  const rows = React.useMemo(
    () =>
      fleetModel(
        { controlPlanes: cps.data, pools: pools.data, health: health.data, addons: addons.error ? undefined : addons.data },
        now,
      ),
    [cps.data, pools.data, health.data, addons.data, addons.error, now],
  );
  const errors = [cps, pools, health].map((w) => w.error).filter((e): e is string => !!e);
  return (
    <div data-loaded={cps.loaded ? 'true' : 'false'}>
      <FleetView rows={rows} onOpen={onOpen} errors={errors} />
    </div>
  );
};

const FleetPage: React.FC = () => {
  const [open, setOpen] = React.useState<FleetRow | undefined>();
  return (
    <PageSection>
      {open ? (
        <>
          <Button variant="link" isInline onClick={() => setOpen(undefined)} data-back="">
            ← All clusters
          </Button>
          <ClusterUpdate
            namespace={open.namespace}
            controlPlane={open.controlPlane ?? open.namespace}
            title={open.cluster}
            hostedCluster={open.controlPlane && open.controlPlane !== open.namespace ? open.controlPlane : undefined}
          />
        </>
      ) : (
        <Fleet onOpen={setOpen} />
      )}
    </PageSection>
  );
};

export default FleetPage;
