// One cluster's update, live: the watches of its objects in one namespace (a cluster's own
// `openshift-update-status`, or a managed cluster's namespace of hub copies) feeding the view.

import * as React from 'react';
import {
  CONTROL_PLANE,
  HISTORY,
  INSIGHT,
  LABEL,
  WORKER_POOL,
  type ControlPlaneUpdateStatus,
  type UpdateHistory,
  type UpdateInsight,
  type WorkerPoolUpdateStatus,
} from '../k8s';
import { clusterModel } from '../model/cluster';
import { ClusterView } from './ClusterView';
import { useList, useNow, useOne } from './watches';

export type ClusterUpdateProps = {
  namespace: string;
  /** The ControlPlaneUpdateStatus: `cluster` on a cluster, the cluster's name for a hub copy. */
  controlPlane: string;
  title: string;
  /** A hosted cluster's objects among others in the namespace: `update.openshift.io/cluster`. */
  hostedCluster?: string;
};

export const ClusterUpdate: React.FC<ClusterUpdateProps> = ({ namespace, controlPlane, title, hostedCluster }) => {
  const only: Record<string, string> = hostedCluster ? { 'update.openshift.io/cluster': hostedCluster } : {};
  const cp = useOne<ControlPlaneUpdateStatus>(CONTROL_PLANE, namespace, controlPlane);
  const pools = useList<WorkerPoolUpdateStatus>(WORKER_POOL, { namespace, selector: { matchLabels: only } });
  const operators = useList<UpdateInsight>(INSIGHT, {
    namespace,
    selector: { matchLabels: { ...only, [LABEL.insightType]: 'progress', [LABEL.resourceKind]: 'ClusterOperator' } },
  });
  const nodes = useList<UpdateInsight>(INSIGHT, {
    namespace,
    selector: { matchLabels: { ...only, [LABEL.insightType]: 'progress', [LABEL.resourceKind]: 'Node' } },
  });
  const health = useList<UpdateInsight>(INSIGHT, {
    namespace,
    selector: { matchLabels: { ...only, [LABEL.insightType]: 'health' } },
  });
  const history = useOne<UpdateHistory>(HISTORY, namespace, 'cluster');
  const now = useNow(5000);
  const model = React.useMemo(
    () =>
      clusterModel(
        {
          controlPlane: cp.data,
          pools: pools.data,
          operators: operators.data,
          nodes: nodes.data,
          health: health.data,
          history: history.data,
        },
        now,
      ),
    [cp.data, pools.data, operators.data, nodes.data, health.data, history.data, now],
  );
  const errors = [cp, pools, operators, nodes, health]
    .map((w) => w.error)
    .filter((e): e is string => !!e);
  const loaded = cp.loaded || !!cp.error;
  return (
    <div data-loaded={loaded ? 'true' : 'false'}>
      <ClusterView model={model} title={title} errors={errors} />
    </div>
  );
};
