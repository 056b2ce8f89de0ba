// The fleet's table (pure: rows in, markup out), as `kubectl update-status --fleet` prints it:
// worst first, with LAST REPORT (Stale past 15 minutes) and the agent's health.

import * as React from 'react';
import { Button, Label, Title } from '@patternfly/react-core';
import type { FleetRow } from '../model/fleet';
import { vis, visLine } from '../escape';
import { Assessment } from './Assessment';

const Health: React.FC<{ row: FleetRow }> = ({ row }) => {
  const h = row.health;
  const parts = (
    [
      ['Critical', h.critical, 'red'],
      ['Error', h.error, 'red'],
      ['Warning', h.warning, 'orange'],
      ['Info', h.info, 'blue'],
      ['Unknown', h.unknown, 'grey'],
    ] as const
  ).filter(([, n]) => n > 0);
  return parts.length === 0 ? (
    <span className="us-muted">none</span>
  ) : (
    <>
      {parts.map(([l, n, c]) => (
        <Label key={l} color={c} isCompact>
          {n} {l}
        </Label>
      ))}
    </>
  );
};

const Agent: React.FC<{ row: FleetRow }> = ({ row }) => {
  const a = row.agent;
  if (!a) return <span className="us-muted">-</span>;
  const degraded = a.degraded?.status === 'True';
  return (
    <span data-fact="agent">
      {degraded ? (
        <Label color="red" isCompact>
          Degraded
        </Label>
      ) : a.available === 'True' ? (
        'Available'
      ) : (
        `Available=${a.available}`
      )}
      {degraded && a.degraded?.message && <span className="us-msg"> {vis(a.degraded.message)}</span>}
    </span>
  );
};

export const FleetView: React.FC<{ rows: FleetRow[]; onOpen: (row: FleetRow) => void; errors?: string[] }> = ({
  rows,
  onOpen,
  errors,
}) => (
  <div className="us-page" data-view="fleet">
    <Title headingLevel="h1">Cluster updates across the fleet</Title>
    {(errors ?? []).map((e) => (
      <p key={e} className="us-msg" role="alert">
        {vis(e)}
      </p>
    ))}
    {rows.length === 0 ? (
      <p data-fact="fleet-empty">No cluster has reported to this hub yet.</p>
    ) : (
      <table className="pf-v6-c-table pf-m-compact us-fleet" aria-label="Clusters, worst first">
        <thead className="pf-v6-c-table__thead">
          <tr className="pf-v6-c-table__tr">
            {['Cluster', 'Assessment', 'Completion', 'Version', 'Workers', 'Pools not completed', 'Health', 'Last report', 'Agent'].map(
              (h) => (
                <th key={h} className="pf-v6-c-table__th" scope="col">
                  {h}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody className="pf-v6-c-table__tbody">
          {rows.map((r) => (
            <tr key={r.cluster} className="pf-v6-c-table__tr" data-cluster={r.cluster}>
              <td className="pf-v6-c-table__td">
                {r.reported ? (
                  <Button variant="link" isInline onClick={() => onOpen(r)} data-open={r.cluster}>
                    {visLine(r.cluster)}
                  </Button>
                ) : (
                  visLine(r.cluster)
                )}
              </td>
              <td className="pf-v6-c-table__td">
                {r.reported ? <Assessment value={r.assessment} /> : <span className="us-muted">not reported</span>}
              </td>
              <td className="pf-v6-c-table__td" data-fact="completion">
                {r.reported ? `${r.completion}%` : '-'}
              </td>
              <td className="pf-v6-c-table__td">
                {r.from ? `${visLine(r.from)} → ` : ''}
                {visLine(r.to)}
              </td>
              <td className="pf-v6-c-table__td">{r.reported ? `${r.workerUpdated}/${r.workerNodes}` : '-'}</td>
              <td className="pf-v6-c-table__td">
                {r.poolsNotCompleted.map((p) => `${visLine(p.name)} (${visLine(p.assessment)})`).join(', ') || '-'}
              </td>
              <td className="pf-v6-c-table__td">
                <Health row={r} />
              </td>
              <td className="pf-v6-c-table__td" data-fact="last-report">
                {r.freshness === 'Stale' ? (
                  <Label color="orange" isCompact>
                    {r.lastReport}
                  </Label>
                ) : (
                  r.lastReport
                )}
              </td>
              <td className="pf-v6-c-table__td">
                <Agent row={r} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </div>
);
