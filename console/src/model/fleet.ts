// The fleet page's model: one row per cluster from the hub copies, worst first, as
// `kubectl update-status --fleet` orders them (cli/src/fleet/assemble.rs `sort_key`), with
// the age of each agent's last report (LAST REPORT, `Stale` past 15 minutes, as `--fleet`'s
// default `--stale-after`) and the agent's own health (its ManagedClusterAddOn's `Degraded`
// condition). Pure: test/fleet-model.test.ts.

import type {
  Condition,
  ControlPlaneUpdateStatus,
  HealthCounts,
  ManagedClusterAddOn,
  UpdateInsight,
  WorkerPoolUpdateStatus,
} from '../k8s';
import { LAST_REPORTED } from '../k8s';
import { human, secondsBetween } from '../format';

export const STALE_AFTER_SECONDS = 15 * 60;

export type Freshness = 'Fresh' | 'Stale' | 'Unknown';
export type AgentHealth = { available: string; degraded?: Condition };
export type FleetRow = {
  /** The row's name: the cluster's hub namespace (a hosted cluster's: `<namespace>/<name>`). */
  cluster: string;
  namespace: string;
  /** The copy of the ControlPlaneUpdateStatus (its name), undefined when not reported. */
  controlPlane?: string;
  from: string;
  to: string;
  assessment: string;
  completion: number;
  workerNodes: number;
  workerUpdated: number;
  poolsNotCompleted: { name: string; assessment: string }[];
  health: Required<HealthCounts>;
  reported: boolean;
  freshness?: Freshness;
  lastReport: string;
  agent?: AgentHealth;
};

export type FleetInputs = {
  controlPlanes: ControlPlaneUpdateStatus[];
  pools: WorkerPoolUpdateStatus[];
  health: UpdateInsight[];
  /** The `update-status` ManagedClusterAddOns (undefined: not an ACM hub, or not readable). */
  addons?: ManagedClusterAddOn[];
};

const zero = (): Required<HealthCounts> => ({ critical: 0, error: 0, warning: 0, info: 0, unknown: 0 });

const worstLevel = (h: HealthCounts): number =>
  h.critical ? 4 : h.error ? 3 : h.warning ? 2 : h.info || h.unknown ? 1 : 0;

const badness = (r: FleetRow): number => {
  if (!r.reported || r.freshness === 'Stale') return 5;
  switch (r.assessment) {
    case 'Stalled':
      return 4;
    case 'Progressing - Slow':
      return 3;
    case 'Unknown':
      return 2;
    case 'Completed':
      return 0;
    default:
      return 1;
  }
};

const poolTrouble = (r: FleetRow): number =>
  Math.max(0, ...r.poolsNotCompleted.map((p) => (p.assessment === 'Degraded' ? 2 : p.assessment === 'Excluded' ? 1 : 0)));

/** Worst first: health, then assessment, then pools in trouble, lowest completion, name. */
export const compareRows = (a: FleetRow, b: FleetRow): number =>
  worstLevel(b.health) - worstLevel(a.health) ||
  badness(b) - badness(a) ||
  poolTrouble(b) - poolTrouble(a) ||
  a.completion - b.completion ||
  (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0);

const agentHealth = (a: ManagedClusterAddOn): AgentHealth => {
  const conds = a.status?.conditions ?? [];
  const available = conds.find((c) => c.type === 'Available')?.status;
  return {
    available: available === 'True' || available === 'False' ? available : 'Unknown',
    degraded: conds.find((c) => c.type === 'Degraded'),
  };
};

const lastReport = (cp: ControlPlaneUpdateStatus, now: Date): { freshness: Freshness; text: string } => {
  const at = cp.metadata?.annotations?.[LAST_REPORTED];
  const age = secondsBetween(at, now);
  if (age === undefined) return { freshness: 'Unknown', text: '<unknown>' };
  if (age > STALE_AFTER_SECONDS) return { freshness: 'Stale', text: `Stale (${human(age)})` };
  return { freshness: 'Fresh', text: human(age) };
};

const LEVEL_KEY: Record<string, keyof HealthCounts> = {
  Critical: 'critical',
  Error: 'error',
  Warning: 'warning',
  Info: 'info',
};

/** The rows at `now`, worst first. */
export const fleetModel = (inp: FleetInputs, now: Date): FleetRow[] => {
  const healthByNs = new Map<string, Required<HealthCounts>>();
  for (const i of inp.health) {
    const ns = i.metadata?.namespace ?? '';
    const h = healthByNs.get(ns) ?? zero();
    h[LEVEL_KEY[i.status?.health?.impact?.level ?? ''] ?? 'unknown'] += 1;
    healthByNs.set(ns, h);
  }
  const poolsByNs = new Map<string, WorkerPoolUpdateStatus[]>();
  for (const p of inp.pools) {
    const ns = p.metadata?.namespace ?? '';
    poolsByNs.set(ns, [...(poolsByNs.get(ns) ?? []), p]);
  }
  const agents = new Map<string, AgentHealth>();
  for (const a of inp.addons ?? []) agents.set(a.metadata?.namespace ?? '', agentHealth(a));
  const rows: FleetRow[] = [];
  const reported = new Set<string>();
  for (const cp of inp.controlPlanes) {
    const ns = cp.metadata?.namespace ?? '';
    const name = cp.metadata?.name ?? '';
    reported.add(ns);
    const s = cp.status ?? {};
    const pools = poolsByNs.get(ns) ?? [];
    const { freshness, text } = lastReport(cp, now);
    rows.push({
      cluster: name === ns ? ns : `${ns}/${name}`,
      namespace: ns,
      controlPlane: name,
      from: s.versions?.previous ?? '',
      to: s.versions?.target ?? '',
      assessment: s.assessment ?? 'Unknown',
      completion: s.completionPercent ?? 0,
      workerNodes: pools.reduce((n, p) => n + (p.status?.nodes?.total ?? 0), 0),
      workerUpdated: pools.reduce((n, p) => n + (p.status?.nodes?.updated ?? 0), 0),
      poolsNotCompleted: pools
        .filter((p) => !['Completed', 'Empty'].includes(p.status?.assessment ?? ''))
        .map((p) => ({ name: p.metadata?.name ?? '', assessment: p.status?.assessment ?? 'Unknown' })),
      health: healthByNs.get(ns) ?? zero(),
      reported: true,
      freshness,
      lastReport: text,
      agent: agents.get(ns),
    });
  }
  for (const [ns, agent] of agents) {
    if (reported.has(ns)) continue;
    rows.push({
      cluster: ns,
      namespace: ns,
      from: '',
      to: '',
      assessment: 'Unknown',
      completion: 0,
      workerNodes: 0,
      workerUpdated: 0,
      poolsNotCompleted: [],
      health: zero(),
      reported: false,
      lastReport: '-',
      agent,
    });
  }
  return rows.sort(compareRows);
};
