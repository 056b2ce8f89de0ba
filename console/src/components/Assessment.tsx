// An assessment (`Progressing`, `Completed`, `Degraded`, ...) as a coloured label.

import * as React from 'react';
import { Label } from '@patternfly/react-core';
import { visLine } from '../escape';

const color = (a: string): 'green' | 'blue' | 'orange' | 'red' | 'grey' => {
  switch (a) {
    case 'Completed':
      return 'green';
    case 'Progressing':
      return 'blue';
    case 'Progressing - Slow':
    case 'Excluded':
      return 'orange';
    case 'Stalled':
    case 'Degraded':
      return 'red';
    default:
      return 'grey';
  }
};

export const Assessment: React.FC<{ value: string }> = ({ value }) => (
  <Label color={color(value)} data-fact="assessment">
    {visLine(value)}
  </Label>
);
