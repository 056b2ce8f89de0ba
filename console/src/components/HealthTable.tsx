// The health insights, as the text view's table (SINCE, LEVEL, IMPACT, MESSAGE) with what
// each points at (the resource and its `related` objects) and its remediation. A reference
// is a link only when it is a plain https URL; anything else is shown as text.

import * as React from 'react';
import { Label } from '@patternfly/react-core';
import type { HealthRow } from '../model/cluster';
import { vis, visLine } from '../escape';
import { utc } from '../format';

const levelColor = (l: string): 'red' | 'orange' | 'blue' | 'grey' =>
  l === 'Critical' || l === 'Error' ? 'red' : l === 'Warning' ? 'orange' : l === 'Info' ? 'blue' : 'grey';

export const HealthTable: React.FC<{ rows: HealthRow[] }> = ({ rows }) =>
  rows.length === 0 ? (
    <p data-fact="health-none">Update is proceeding well: no health insight.</p>
  ) : (
    <table className="pf-v6-c-table pf-m-compact us-health" aria-label="Health insights">
      <thead className="pf-v6-c-table__thead">
        <tr className="pf-v6-c-table__tr">
          <th className="pf-v6-c-table__th" scope="col">Since</th>
          <th className="pf-v6-c-table__th" scope="col">Level</th>
          <th className="pf-v6-c-table__th" scope="col">Impact</th>
          <th className="pf-v6-c-table__th" scope="col">Message</th>
          <th className="pf-v6-c-table__th" scope="col">Resources</th>
        </tr>
      </thead>
      <tbody className="pf-v6-c-table__tbody">
        {rows.map((h) => (
          <tr key={h.name} className="pf-v6-c-table__tr" data-insight={h.name}>
            <td className="pf-v6-c-table__td" title={utc(h.startedAt)}>
              {h.since}
            </td>
            <td className="pf-v6-c-table__td">
              <Label color={levelColor(h.level)}>{visLine(h.level)}</Label>
            </td>
            <td className="pf-v6-c-table__td">{visLine(h.impact)}</td>
            <td className="pf-v6-c-table__td">
              <div className="us-msg" data-fact="summary">
                {vis(h.summary)}
              </div>
              {(h.description || h.referenceText) && (
                <details>
                  <summary>Details</summary>
                  {h.description && <div className="us-msg">{vis(h.description)}</div>}
                  {h.referenceText && (
                    <div>
                      Remediation:{' '}
                      {h.referenceUrl ? (
                        <a href={h.referenceUrl} target="_blank" rel="noopener noreferrer">
                          {visLine(h.referenceUrl)}
                        </a>
                      ) : (
                        <span className="us-msg">{vis(h.referenceText)}</span>
                      )}
                    </div>
                  )}
                </details>
              )}
            </td>
            <td className="pf-v6-c-table__td">
              <ul className="us-related">
                <li>{visLine(h.resource)}</li>
                {h.related.map((r) => (
                  <li key={r} data-related="">
                    {visLine(r)}
                  </li>
                ))}
                {h.relatedOmitted > 0 && <li className="us-muted">and {h.relatedOmitted} more</li>}
              </ul>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
