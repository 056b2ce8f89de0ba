// The test host page: loads the built plugin as the console loads plugins, and nothing more.
//
// - The plugin's manifest and entry script come from `/api/plugins/<name>/` (the console's
//   bridge endpoint; here the e2e test's server, which proxies to the plugin's own server), and
//   are loaded by `@openshift/dynamic-plugin-sdk`'s PluginStore, the library the console uses.
// - The shared scope holds the console's shared modules the plugin uses: `react` and
//   `@openshift-console/dynamic-plugin-sdk` (its `useK8sWatchResource`, ./sdk.ts). Any other
//   shared module the plugin asked for would be missing, and its load would fail.
// - Its extensions are used as the console uses them: `console.page/route` (the page whose
//   path is the location's, in the active perspective), `console.navigation/href` (the
//   perspective's navigation), `console.tab/horizontalNav` on ClusterVersion (the tabs of
//   Cluster Settings, `/settings/cluster`).
// - PatternFly's base styles are loaded by the host, as the console loads them; the dark theme
//   is the console's class `pf-v6-theme-dark` on <html> (`?theme=dark`).
// The data comes from the real API server through `/api/kubernetes` (the test's proxy adds a
// bearer token, as the console's bridge adds the user's).

import '@patternfly/patternfly/patternfly.css';
import './host.css';
import * as React from 'react';
import { createRoot } from 'react-dom/client';
import {
  PluginStore,
  PluginStoreProvider,
  useResolvedExtensions,
  type Extension,
  type LoadedExtension,
} from '@openshift/dynamic-plugin-sdk';
import * as sdk from './sdk';

const PLUGIN = 'update-status-console-plugin';

const sharedScope = {
  react: { [React.version]: { get: () => Promise.resolve(() => React), loaded: 1, from: 'console-host', eager: true } },
  '@openshift-console/dynamic-plugin-sdk': {
    '4.22.0': { get: () => Promise.resolve(() => sdk), loaded: 1, from: 'console-host', eager: true },
  },
};

// As the console: plugins may depend on the console's version (`@console/pluginAPI`).
const store = new PluginStore({
  loaderOptions: { sharedScope, customDependencyResolutions: { '@console/pluginAPI': '4.22.0' } },
});

type Props = Record<string, unknown>;
const isRoute = (e: Extension): e is Extension<'console.page/route', Props> => e.type === 'console.page/route';
const isNav = (e: Extension): e is Extension<'console.navigation/href', Props> => e.type === 'console.navigation/href';
const isTab = (e: Extension): e is Extension<'console.tab/horizontalNav', Props> => e.type === 'console.tab/horizontalNav';

const usePath = (): [string, (to: string) => void] => {
  const [path, setPath] = React.useState(window.location.pathname);
  React.useEffect(() => {
    const f = () => setPath(window.location.pathname);
    window.addEventListener('popstate', f);
    return () => window.removeEventListener('popstate', f);
  }, []);
  const go = React.useCallback((to: string) => {
    window.history.pushState(null, '', to + window.location.search);
    setPath(to);
  }, []);
  return [path, go];
};

const perspectiveOf = (path: string) => (path.startsWith('/multicloud') ? 'acm' : 'admin');

const Link: React.FC<{ to: string; go: (to: string) => void; children: React.ReactNode; current?: boolean }> = ({
  to,
  go,
  children,
  current,
}) => (
  <a
    href={to}
    className={`pf-v6-c-nav__link${current ? ' pf-m-current' : ''}`}
    aria-current={current ? 'page' : undefined}
    onClick={(e) => {
      e.preventDefault();
      go(to);
    }}
  >
    {children}
  </a>
);

const Marked: React.FC<{ children: React.ReactNode }> = ({ children }) => {
  React.useEffect(() => {
    if (performance.getEntriesByName('update-status:interactive').length === 0) performance.mark('update-status:interactive');
  }, []);
  return <>{children}</>;
};

const App: React.FC = () => {
  const [path, go] = usePath();
  const perspective = perspectiveOf(path);
  const [routes, routesResolved] = useResolvedExtensions(isRoute);
  const [navs] = useResolvedExtensions(isNav);
  const [tabs] = useResolvedExtensions(isTab);
  const inPerspective = (e: LoadedExtension) => !e.properties.perspective || e.properties.perspective === perspective;
  const route = routes.find(
    (r) => inPerspective(r) && (r.properties.exact ? r.properties.path === path : path.startsWith(String(r.properties.path))),
  );
  const clusterTabs = tabs.filter((t) => (t.properties.model as { kind?: string }).kind === 'ClusterVersion');
  let main: React.ReactNode = <p>Loading the plugin…</p>;
  if (path.startsWith('/settings/cluster')) {
    const tab = clusterTabs.find((t) => path === `/settings/cluster/${(t.properties.page as { href: string }).href}`);
    const Tab = tab?.properties.component as React.ComponentType<{ obj: unknown }> | undefined;
    main = (
      <>
        <h1 className="pf-v6-c-title pf-m-2xl">Cluster Settings</h1>
        <nav className="pf-v6-c-tabs" aria-label="Cluster Settings">
          <ul className="pf-v6-c-tabs__list">
            <li className={`pf-v6-c-tabs__item${tab ? '' : ' pf-m-current'}`}>
              <Link to="/settings/cluster" go={go}>
                Details
              </Link>
            </li>
            {clusterTabs.map((t) => {
              const page = t.properties.page as { name: string; href: string };
              return (
                <li key={page.href} className={`pf-v6-c-tabs__item${t === tab ? ' pf-m-current' : ''}`} data-tab={page.href}>
                  <Link to={`/settings/cluster/${page.href}`} go={go}>
                    {page.name}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        {Tab ? (
          <Marked>
            <Tab obj={{}} />
          </Marked>
        ) : (
          <p>The ClusterVersion's details would be here.</p>
        )}
      </>
    );
  } else if (route) {
    const Page = route.properties.component as React.ComponentType;
    main = (
      <Marked>
        <Page />
      </Marked>
    );
  } else if (routesResolved) {
    main = <p data-host="no-route">No page at {path}.</p>;
  }
  const dark = document.documentElement.classList.contains('pf-v6-theme-dark');
  return (
    <div className="us-host">
      <header className="us-host-bar">
        <strong>Test host of the update-status console plugin</strong> (not the OpenShift console)
        <span> · perspective: {perspective === 'acm' ? 'Fleet Management (acm)' : 'Administrator (admin)'}</span>
        <button
          type="button"
          className="pf-v6-c-button pf-m-link pf-m-inline"
          onClick={() => go(perspective === 'acm' ? '/update-status' : '/multicloud/update-status')}
        >
          Switch perspective
        </button>
        <span> · theme: {dark ? 'dark' : 'light'}</span>
      </header>
      <div className="us-host-body">
        <nav className="pf-v6-c-nav" aria-label="Navigation">
          <ul className="pf-v6-c-nav__list">
            {navs.filter(inPerspective).map((n) => (
              <li key={String(n.properties.id)} className="pf-v6-c-nav__item" data-nav={String(n.properties.id)}>
                <Link to={String(n.properties.href)} go={go} current={path === n.properties.href}>
                  {String(n.properties.name)}
                </Link>
              </li>
            ))}
            {perspective === 'admin' && (
              <li className="pf-v6-c-nav__item">
                <Link to="/settings/cluster" go={go} current={path.startsWith('/settings/cluster')}>
                  Cluster Settings
                </Link>
              </li>
            )}
          </ul>
        </nav>
        <main className="us-host-main">{main}</main>
      </div>
    </div>
  );
};

const params = new URLSearchParams(window.location.search);
if (params.get('theme') === 'dark') document.documentElement.classList.add('pf-v6-theme-dark');
const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <PluginStoreProvider store={store}>
      <App />
    </PluginStoreProvider>,
  );
}
store.loadPlugin(`/api/plugins/${PLUGIN}/plugin-manifest.json`).catch((e: unknown) => {
  (window as unknown as { __hostError: string }).__hostError = String(e);
});
(window as unknown as { __pluginStore: PluginStore }).__pluginStore = store;
