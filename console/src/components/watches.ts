// The console's watches of our objects (the SDK's useK8sWatchResource: list then watch, by
// label selector; never one list of everything). A missing object (404) is "not there yet",
// not an error.

import * as React from 'react';
import { useK8sWatchResource, type K8sResourceCommon } from '@openshift-console/dynamic-plugin-sdk';
import type { GroupVersionKind } from '../k8s';

type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};

export type Watched<T> = { data: T; loaded: boolean; error?: string };

const message = (e: unknown): string | undefined => {
  if (!e) return undefined;
  const code = (e as { response?: { status?: number }; code?: number }).response?.status ?? (e as { code?: number }).code;
  if (code === 404) return undefined;
  return (e as { message?: string }).message || String(e);
};

export const useList = <T extends K8sResourceCommon>(
  gvk: GroupVersionKind,
  opts: { namespace?: string; selector?: Selector; fieldSelector?: string },
): Watched<T[]> => {
  const [data, loaded, err] = useK8sWatchResource<T[]>({
    groupVersionKind: gvk,
    isList: true,
    namespace: opts.namespace,
    namespaced: true,
    selector: opts.selector,
    fieldSelector: opts.fieldSelector,
  });
  return { data: Array.isArray(data) ? data : [], loaded, error: message(err) };
};

export const useOne = <T extends K8sResourceCommon>(gvk: GroupVersionKind, namespace: string, name: string): Watched<T | undefined> => {
  const [data, loaded, err] = useK8sWatchResource<T>({
    groupVersionKind: gvk,
    isList: false,
    namespace,
    name,
  });
  const error = message(err);
  return { data: err || !data || Object.keys(data as object).length === 0 ? undefined : data, loaded, error };
};

/** The current time, renewed every `ms` (durations and ages on the page). */
export const useNow = (ms: number): Date => {
  const [now, setNow] = React.useState(() => new Date());
  React.useEffect(() => {
    const t = setInterval(() => setNow(new Date()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
};
