// Exposed module `ClusterUpdatePage`: the page of Administration → Cluster update
// (`/update-status`) and the tab of Cluster Settings (the ClusterVersion's details), showing
// the cluster's own objects in `openshift-update-status`.

import * as React from 'react';
import { PageSection } from '@patternfly/react-core';
import { NAMESPACE } from '../k8s';
import { ClusterUpdate } from './ClusterUpdate';
import '../styles.css';

const ClusterUpdatePage: React.FC = () => (
  <PageSection>
    <ClusterUpdate namespace={NAMESPACE} controlPlane="cluster" title={NAMESPACE} />
  </PageSection>
);

export default ClusterUpdatePage;
