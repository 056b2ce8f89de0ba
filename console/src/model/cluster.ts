// The cluster page's model: what it draws, computed from our objects at an instant (pure, no
// React: test/cluster-model.test.ts). The same facts as the web view's model
// (cli/src/web/model.rs), computed here from the objects the console's watches hold.

import type {
  Condition,
  ControlPlaneUpdateStatus,
  Estimate,
  HealthCounts,
  NodeCounts,
  OperatorCounts,
  ResourceRef,
  UpdateHistory,
  UpdateInsight,
  WorkerPoolUpdateStatus,
} from '../k8s';
import { safeHttpsUrl } from '../escape';
import { secondsBetween, shortDuration } from '../format';

/** Node cell states, in the web view's order (cli/src/web/model.rs CellState). */
export const CELL_STATES = [
  'updated',
  'pending',
  'draining',
  'updating',
  'rebooting',
  'excluded',
  'degraded',
  'unavailable',
  'unknown',
] as const;
export type CellState = (typeof CELL_STATES)[number];

export type OperatorState = 'updated' | 'updating' | 'pending' | 'degraded' | 'unavailable';

export type Tile = { name: string; state: OperatorState; version: string; message: string };
export type NodeCell = { name: string; state: CellState; message: string; version: string };
export type Pool = {
  name: string;
  controlPlane: boolean;
  assessment: string;
  completion: number;
  updated: number;
  total: number;
  counts: NodeCounts;
  paused: boolean;
  nodes: NodeCell[];
};
export type HealthRow = {
  name: string;
  level: string;
  impact: string;
  summary: string;
  description: string;
  /** The remediation reference when it is an https URL (a link), else undefined. */
  referenceUrl?: string;
  /** The remediation reference as text (anything else). */
  referenceText: string;
  resource: string;
  related: string[];
  relatedOmitted: number;
  startedAt?: string;
  since: string;
};
export type Remaining = { scope: string; median: string; earliest: string; latest: string; paused: boolean };
export type Estimates = { method: string; message: string; items: Remaining[] };
export type ControlPlane = {
  assessment: string;
  target: string;
  previous: string;
  completion: number;
  startedAt?: string;
  completedAt?: string;
  duration: string;
  operators: OperatorCounts;
  health: HealthCounts;
  tiles: Tile[];
};
export type ClusterModel = {
  updating: boolean;
  controlPlane?: ControlPlane;
  pools: Pool[];
  health: HealthRow[];
  estimates?: Estimates;
};

const LEVELS = ['Unknown', 'Info', 'Warning', 'Error', 'Critical'];
const levelRank = (l: string | undefined): number => Math.max(0, LEVELS.indexOf(l ?? 'Unknown'));

const condition = (cs: Condition[] | undefined, type: string): Condition | undefined =>
  (cs ?? []).find((c) => c.type === type);

/** A node's cell, from its progress insight (as CellState::of_node). */
export const cellState = (i: UpdateInsight): CellState => {
  const p = i.status?.progress;
  if (!p) return 'unknown';
  switch (p.assessment) {
    case 'Degraded':
      return 'degraded';
    case 'Unavailable':
      return 'unavailable';
    case 'Excluded':
      return 'excluded';
    case 'Completed':
      return 'updated';
    case 'Outdated':
      return 'pending';
    case 'Progressing':
      switch (p.phase) {
        case 'Draining':
          return 'draining';
        case 'Rebooting':
          return 'rebooting';
        case 'Paused':
          return 'excluded';
        case 'Updated':
          return 'updated';
        case 'Pending':
          return 'pending';
        default:
          return 'updating';
      }
    default:
      return p.phase === 'Updated' ? 'updated' : p.phase === 'Paused' ? 'excluded' : p.phase === 'Pending' ? 'pending' : 'unknown';
  }
};

/** An operator's tile (as the web view's `tile`). */
export const tile = (i: UpdateInsight): Tile | undefined => {
  const p = i.status?.progress;
  const name = i.status?.resource?.name;
  if (!p || !name) return undefined;
  const unavailable = condition(p.conditions, 'Available');
  const degraded = condition(p.conditions, 'Degraded');
  const updating = condition(p.conditions, 'Updating');
  let state: OperatorState;
  let message = '';
  if (unavailable?.status === 'False') {
    state = 'unavailable';
    message = unavailable.message ?? '';
  } else if (degraded?.status === 'True') {
    state = 'degraded';
    message = degraded.message ?? '';
  } else {
    state = p.assessment === 'Updated' ? 'updated' : p.assessment === 'Updating' ? 'updating' : 'pending';
    message = state === 'updated' ? '' : updating?.message ?? '';
  }
  const v = p.version;
  const version =
    v?.current && v?.target && v.current !== v.target ? `${v.current} → ${v.target}` : v?.target || v?.current || '';
  return { name, state, version, message };
};

const resourceText = (r: ResourceRef | undefined): string => {
  if (!r) return '';
  const kind = r.group ? `${r.kind ?? ''}.${r.group}` : r.kind ?? '';
  return r.namespace ? `${kind} ${r.namespace}/${r.name ?? ''}` : `${kind} ${r.name ?? ''}`;
};

const healthRow = (i: UpdateInsight, now: Date): HealthRow | undefined => {
  const h = i.status?.health;
  if (!h) return undefined;
  const ref = h.remediation?.reference ?? '';
  const age = secondsBetween(h.startedAt, now);
  return {
    name: i.metadata?.name ?? '',
    level: h.impact?.level ?? 'Unknown',
    impact: h.impact?.type ?? '',
    summary: h.impact?.summary ?? '',
    description: h.impact?.description ?? '',
    referenceUrl: safeHttpsUrl(ref),
    referenceText: ref,
    resource: resourceText(i.status?.resource),
    related: (h.related ?? []).map(resourceText),
    relatedOmitted: h.relatedOmitted ?? 0,
    startedAt: h.startedAt,
    since: age === undefined ? '-' : shortDuration(age),
  };
};

/** Health insights as the text view orders them: most severe first, then the newest. */
export const sortHealth = (rows: HealthRow[]): HealthRow[] =>
  [...rows].sort(
    (a, b) =>
      levelRank(b.level) - levelRank(a.level) ||
      (b.startedAt ?? '').localeCompare(a.startedAt ?? '') ||
      a.name.localeCompare(b.name),
  );

const remaining = (scope: string, e: Estimate | undefined, now: Date): Remaining | undefined => {
  if (!e) return undefined;
  const until = (t: string | undefined) => {
    const s = secondsBetween(t, now);
    return s === undefined ? '-' : shortDuration(-s);
  };
  return {
    scope,
    median: until(e.estimatedCompletionTime),
    earliest: until(e.earliestCompletionTime),
    latest: until(e.latestCompletionTime),
    paused: !!e.paused,
  };
};

const estimates = (h: UpdateHistory | undefined, now: Date): Estimates | undefined => {
  const e = h?.status?.estimates;
  if (!e) return undefined;
  const items = [
    remaining('Control plane', e.controlPlane, now),
    ...(e.pools ?? []).map((p) => remaining(`Pool ${p.name ?? ''}`, p.estimate, now)),
    remaining('Whole update', e.update, now),
  ].filter((r): r is Remaining => !!r);
  return {
    method: e.method === 'Learned' ? 'learned' : "oc's method",
    message: e.message ?? '',
    items,
  };
};

export const MASTER_POOL = 'master';

const poolOf = (i: UpdateInsight): string => i.status?.scope?.pool ?? i.metadata?.labels?.['update.openshift.io/pool'] ?? '';

export type ClusterInputs = {
  controlPlane?: ControlPlaneUpdateStatus;
  pools: WorkerPoolUpdateStatus[];
  operators: UpdateInsight[];
  nodes: UpdateInsight[];
  health: UpdateInsight[];
  history?: UpdateHistory;
};

const byName = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** The page at `now`. */
export const clusterModel = (inp: ClusterInputs, now: Date): ClusterModel => {
  const cp = inp.controlPlane?.status;
  const nodesByPool = new Map<string, NodeCell[]>();
  for (const i of inp.nodes) {
    const name = i.status?.resource?.name ?? i.metadata?.name ?? '';
    const p = i.status?.progress;
    const cell: NodeCell = {
      name,
      state: cellState(i),
      message: p?.message ?? '',
      version: p?.version?.current ?? '',
    };
    const pool = poolOf(i);
    const list = nodesByPool.get(pool);
    if (list) list.push(cell);
    else nodesByPool.set(pool, [cell]);
  }
  for (const list of nodesByPool.values()) list.sort(byName((c: NodeCell) => c.name));
  const pools: Pool[] = [];
  const masters = nodesByPool.get(MASTER_POOL);
  if (cp?.nodes?.total || masters?.length) {
    const n = cp?.nodes ?? {};
    pools.push({
      name: MASTER_POOL,
      controlPlane: true,
      assessment: cp?.assessment ?? 'Unknown',
      completion: n.total ? Math.floor(((n.updated ?? 0) * 100) / n.total) : 0,
      updated: n.updated ?? 0,
      total: n.total ?? masters?.length ?? 0,
      counts: n,
      paused: false,
      nodes: masters ?? [],
    });
  }
  const workers = [...inp.pools].sort(
    byName((w: WorkerPoolUpdateStatus) => {
      const name = w.status?.resource?.name ?? w.metadata?.name ?? '';
      return (name === 'worker' ? '0' : '1') + name;
    }),
  );
  for (const w of workers) {
    const name = w.status?.resource?.name ?? w.metadata?.name ?? '';
    const n = w.status?.nodes ?? {};
    pools.push({
      name,
      controlPlane: false,
      assessment: w.status?.assessment ?? 'Unknown',
      completion: w.status?.completionPercent ?? 0,
      updated: n.updated ?? 0,
      total: n.total ?? 0,
      counts: n,
      paused: !!w.status?.paused,
      nodes: nodesByPool.get(name) ?? [],
    });
  }
  const health = sortHealth(inp.health.map((i) => healthRow(i, now)).filter((r): r is HealthRow => !!r));
  const tiles = inp.operators
    .filter((i) => i.status?.resource?.kind === 'ClusterOperator')
    .map(tile)
    .filter((t): t is Tile => !!t)
    .sort(byName((t: Tile) => t.name));
  const updating = !!cp && cp.assessment !== 'Completed';
  const started = cp?.startedAt;
  const end = cp?.completedAt ? new Date(cp.completedAt) : now;
  const elapsed = secondsBetween(started, end);
  return {
    updating,
    controlPlane: cp && {
      assessment: cp.assessment ?? 'Unknown',
      target: cp.versions?.target ?? '',
      previous: cp.versions?.previous ?? '',
      completion: cp.completionPercent ?? 0,
      startedAt: cp.startedAt,
      completedAt: cp.completedAt,
      duration: elapsed === undefined ? '-' : shortDuration(elapsed),
      operators: cp.operators ?? {},
      health: cp.healthInsights ?? {},
      tiles,
    },
    pools,
    health,
    estimates: estimates(inp.history, now),
  };
};
