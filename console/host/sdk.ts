// The part of `@openshift-console/dynamic-plugin-sdk` the plugin uses, as the test host
// provides it through the shared scope (the console provides its own): `useK8sWatchResource`,
// with the console's semantics — API discovery of the kind, a list (in pages of 500) then a
// watch from its resourceVersion, through the `/api/kubernetes` proxy, by label and field
// selector; identical requests share one watch; changes reach the components batched every
// 100 ms; a watch that ends or expires (410) lists again. Returns [data, loaded, loadError].

import * as React from 'react';

type GVK = { group?: string; version: string; kind: string };
type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};
export type WatchK8sResource = {
  groupVersionKind?: GVK;
  isList?: boolean;
  name?: string;
  namespace?: string;
  namespaced?: boolean;
  selector?: Selector;
  fieldSelector?: string;
};
type Obj = { metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } };
type State = { data: unknown; loaded: boolean; error?: HttpError };

export class HttpError extends Error {
  constructor(
    message: string,
    public code: number,
  ) {
    super(message);
  }
}

const BASE = '/api/kubernetes';
const discovered = new Map<string, Promise<{ plural: string; namespaced: boolean }>>();

const resourceOf = (gvk: GVK) => {
  const gv = gvk.group ? `/apis/${gvk.group}/${gvk.version}` : `/api/${gvk.version}`;
  const key = `${gv}/${gvk.kind}`;
  let p = discovered.get(key);
  if (!p) {
    p = fetch(BASE + gv, { headers: { Accept: 'application/json' } }).then(async (r) => {
      if (!r.ok) throw new HttpError(`${gv}: ${r.status} ${r.statusText}`, r.status);
      const list = (await r.json()) as { resources?: { name: string; kind: string; namespaced: boolean }[] };
      const res = (list.resources ?? []).find((x) => x.kind === gvk.kind && !x.name.includes('/'));
      if (!res) throw new HttpError(`${gvk.kind} is not served by ${gv}`, 404);
      return { plural: res.name, namespaced: res.namespaced };
    });
    p.catch(() => discovered.delete(key));
    discovered.set(key, p);
  }
  return p;
};

export const selectorString = (s: Selector | undefined): string => {
  const parts = Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s?.matchExpressions ?? []) {
    const vals = `(${(e.values ?? []).join(',')})`;
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else if (e.operator === 'In') parts.push(`${e.key} in ${vals}`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin ${vals}`);
  }
  return parts.join(',');
};

const keyOf = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

class Watch {
  private items = new Map<string, Obj>();
  private listeners = new Set<(s: State) => void>();
  private state: State;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private abort = new AbortController();

  constructor(private res: WatchK8sResource) {
    this.state = { data: res.isList ? [] : undefined, loaded: false };
    void this.run();
  }

  /** Returns the unsubscribe function, which says whether it was the last listener. */
  subscribe(f: (s: State) => void): () => boolean {
    this.listeners.add(f);
    f(this.state);
    return () => {
      this.listeners.delete(f);
      if (this.listeners.size > 0) return false;
      this.abort.abort();
      return true;
    };
  }

  private publish(error?: HttpError) {
    const all = [...this.items.values()];
    const data = this.res.isList ? all : all[0];
    const missing = !this.res.isList && !data;
    this.state = {
      data: data ?? (this.res.isList ? [] : {}),
      loaded: !error,
      error: error ?? (missing ? new HttpError(`${this.res.name} not found`, 404) : undefined),
    };
    this.listeners.forEach((f) => f(this.state));
  }

  private soon() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.publish();
    }, 100);
  }

  private async url(): Promise<string> {
    const gvk = this.res.groupVersionKind;
    if (!gvk) throw new HttpError('groupVersionKind is required', 400);
    const { plural, namespaced } = await resourceOf(gvk);
    const gv = gvk.group ? `/apis/${gvk.group}/${gvk.version}` : `/api/${gvk.version}`;
    const ns = namespaced && this.res.namespace ? `/namespaces/${encodeURIComponent(this.res.namespace)}` : '';
    const q = new URLSearchParams();
    const labels = selectorString(this.res.selector);
    if (labels) q.set('labelSelector', labels);
    const fields = [this.res.fieldSelector, this.res.name ? `metadata.name=${this.res.name}` : undefined]
      .filter(Boolean)
      .join(',');
    if (fields) q.set('fieldSelector', fields);
    return `${BASE}${gv}${ns}/${plural}?${q.toString()}`;
  }

  private async run() {
    while (!this.abort.signal.aborted) {
      try {
        const url = await this.url();
        const rv = await this.list(url);
        await this.watch(url, rv);
      } catch (e) {
        if (this.abort.signal.aborted) return;
        const err = e instanceof HttpError ? e : new HttpError(String((e as Error)?.message ?? e), 0);
        this.publish(err);
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }

  private async list(url: string): Promise<string> {
    const items = new Map<string, Obj>();
    let cont = '';
    let rv = '';
    do {
      const r = await fetch(`${url}&limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, {
        signal: this.abort.signal,
        headers: { Accept: 'application/json' },
      });
      if (!r.ok) throw new HttpError(`${r.status} ${r.statusText}: ${(await r.text()).slice(0, 300)}`, r.status);
      const body = (await r.json()) as { items?: Obj[]; metadata?: { continue?: string; resourceVersion?: string } };
      for (const o of body.items ?? []) items.set(keyOf(o), o);
      cont = body.metadata?.continue ?? '';
      rv = body.metadata?.resourceVersion ?? rv;
    } while (cont);
    this.items = items;
    this.publish();
    return rv;
  }

  private async watch(url: string, rv: string) {
    const r = await fetch(`${url}&watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`, {
      signal: this.abort.signal,
      headers: { Accept: 'application/json' },
    });
    if (!r.ok || !r.body) throw new HttpError(`watch: ${r.status} ${r.statusText}`, r.status);
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as { type: string; object: Obj & { code?: number } };
        if (ev.type === 'ERROR') return; // 410 Gone and the like: list again
        if (ev.type === 'BOOKMARK') continue;
        if (ev.type === 'DELETED') this.items.delete(keyOf(ev.object));
        else this.items.set(keyOf(ev.object), ev.object);
        this.soon();
      }
    }
  }
}

const watches = new Map<string, Watch>();

export const useK8sWatchResource = <R,>(res: WatchK8sResource | null): [R, boolean, unknown] => {
  const key = res ? JSON.stringify(res) : '';
  const [state, setState] = React.useState<State>({ data: res?.isList ? [] : undefined, loaded: false });
  React.useEffect(() => {
    if (!res) return undefined;
    let w = watches.get(key);
    if (!w) {
      w = new Watch(res);
      watches.set(key, w);
    }
    const unsubscribe = w.subscribe(setState);
    return () => {
      if (unsubscribe()) watches.delete(key);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return [state.data as R, state.loaded, state.error];
};
