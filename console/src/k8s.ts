// What the plugin reads: our kinds (group update.openshift.io/v1alpha1, the CRDs of
// config/crd/), their labels, and the fields of their status that the pages show. Strings
// are the objects' exact values: they are shown as text, escaped (escape.ts), never as markup.

export const GROUP = 'update.openshift.io';
export const VERSION = 'v1alpha1';
/** Where the controller writes on a cluster (config/default). */
export const NAMESPACE = 'openshift-update-status';

export type GroupVersionKind = { group: string; version: string; kind: string };

export const CONTROL_PLANE: GroupVersionKind = { group: GROUP, version: VERSION, kind: 'ControlPlaneUpdateStatus' };
export const WORKER_POOL: GroupVersionKind = { group: GROUP, version: VERSION, kind: 'WorkerPoolUpdateStatus' };
export const INSIGHT: GroupVersionKind = { group: GROUP, version: VERSION, kind: 'UpdateInsight' };
export const HISTORY: GroupVersionKind = { group: GROUP, version: VERSION, kind: 'UpdateHistory' };
/** Open Cluster Management (ACM): the add-on of each managed cluster, on the hub. */
export const ADDON: GroupVersionKind = {
  group: 'addon.open-cluster-management.io',
  version: 'v1alpha1',
  kind: 'ManagedClusterAddOn',
};

/** Labels the controller puts on its objects (api/src/crd/labels.rs). */
export const LABEL = {
  insightType: 'update.openshift.io/insight-type',
  resourceKind: 'update.openshift.io/resource-kind',
  pool: 'update.openshift.io/pool',
  /** On the hub copies: the managed cluster they come from. */
  cluster: 'open-cluster-management.io/cluster-name',
} as const;
/** The heartbeat annotation of a hub copy of the ControlPlaneUpdateStatus. */
export const LAST_REPORTED = 'update.openshift.io/last-reported';
/** The add-on's name on the hub (config/acm). */
export const ADDON_NAME = 'update-status';

export type ObjectMeta = {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
};

export type Condition = {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
};

export type NodeCounts = {
  total?: number;
  updated?: number;
  outdated?: number;
  available?: number;
  progressing?: number;
  draining?: number;
  excluded?: number;
  degraded?: number;
  pending?: number;
  completed?: number;
  assessedProgressing?: number;
};

export type OperatorCounts = {
  total?: number;
  updated?: number;
  updating?: number;
  waiting?: number;
  healthy?: number;
  unavailable?: number;
  degraded?: number;
};

export type HealthCounts = {
  critical?: number;
  error?: number;
  warning?: number;
  info?: number;
  unknown?: number;
};

export type ControlPlaneUpdateStatus = {
  metadata?: ObjectMeta;
  status?: {
    assessment?: string;
    versions?: { target?: string; previous?: string; installation?: boolean };
    completionPercent?: number;
    startedAt?: string;
    completedAt?: string;
    estimatedCompletedAt?: string;
    operators?: OperatorCounts;
    nodes?: NodeCounts;
    healthInsights?: HealthCounts;
    conditions?: Condition[];
  };
};

export type WorkerPoolUpdateStatus = {
  metadata?: ObjectMeta;
  status?: {
    resource?: ResourceRef;
    assessment?: string;
    paused?: boolean;
    completionPercent?: number;
    targetVersion?: string;
    nodes?: NodeCounts;
    healthInsights?: HealthCounts;
    conditions?: Condition[];
  };
};

export type ResourceRef = { group?: string; kind?: string; name?: string; namespace?: string };

export type UpdateInsight = {
  metadata?: ObjectMeta;
  status?: {
    type?: string;
    resource?: ResourceRef;
    scope?: { type?: string; pool?: string };
    progress?: {
      assessment?: string;
      phase?: string;
      version?: { current?: string; target?: string };
      message?: string;
      since?: string;
      estimate?: string;
      conditions?: Condition[];
    };
    health?: {
      startedAt?: string;
      impact?: { level?: string; type?: string; summary?: string; description?: string };
      remediation?: { reference?: string };
      related?: ResourceRef[];
      relatedOmitted?: number;
      source?: string;
    };
  };
};

export type Estimate = {
  remainingSeconds?: number;
  earliestRemainingSeconds?: number;
  latestRemainingSeconds?: number;
  estimatedCompletionTime?: string;
  earliestCompletionTime?: string;
  latestCompletionTime?: string;
  paused?: boolean;
};

export type UpdateHistory = {
  metadata?: ObjectMeta;
  status?: {
    estimates?: {
      method?: string;
      message?: string;
      computedAt?: string;
      controlPlane?: Estimate;
      pools?: { name?: string; estimate?: Estimate }[];
      update?: Estimate;
    };
  };
};

export type ManagedClusterAddOn = {
  metadata?: ObjectMeta;
  status?: { conditions?: Condition[] };
};
