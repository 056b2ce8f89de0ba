// Two builds: the plugin (dist/: plugin-manifest.json, the entry script and the exposed
// modules' chunks, by the SDK's ConsoleRemotePlugin, which validates every extension against
// the SDK's schema and the exposed modules they name), and the test host page (dist-host/:
// what e2e/tests/console_plugin.rs serves in place of the console, which cannot run here).
const path = require('path');
const { ConsoleRemotePlugin } = require('@openshift-console/dynamic-plugin-sdk-webpack');

const production = process.env.NODE_ENV === 'production';
const ts = {
  test: /\.tsx?$/,
  loader: 'ts-loader',
  // Type checking is `npm run typecheck` (tsc --noEmit); webpack only transpiles.
  options: { transpileOnly: true, configFile: path.resolve(__dirname, 'tsconfig.json') },
};
const css = { test: /\.css$/, use: ['style-loader', 'css-loader'] };
const common = {
  mode: production ? 'production' : 'development',
  devtool: false,
  resolve: { extensions: ['.ts', '.tsx', '.js', '.jsx'] },
  performance: { hints: false },
  stats: 'errors-warnings',
};

const plugin = {
  ...common,
  name: 'plugin',
  context: path.resolve(__dirname, 'src'),
  entry: {},
  output: {
    path: path.resolve(__dirname, 'dist'),
    filename: production ? '[name]-bundle-[contenthash].min.js' : '[name]-bundle.js',
    chunkFilename: production ? '[name]-chunk-[chunkhash].min.js' : '[name]-chunk.js',
    clean: true,
  },
  module: { rules: [ts, css] },
  plugins: [
    new ConsoleRemotePlugin({
      pluginMetadata: {
        name: 'update-status-console-plugin',
        version: '0.1.0',
        displayName: 'update-status',
        description: 'How the cluster update goes, and the fleet\'s: the objects update-status writes, live.',
        exposedModules: {
          ClusterUpdatePage: './components/ClusterUpdatePage',
          FleetPage: './components/FleetPage',
        },
        dependencies: { '@console/pluginAPI': '>=4.22.0-0' },
      },
    }),
  ],
};

const host = {
  ...common,
  name: 'host',
  context: path.resolve(__dirname, 'host'),
  entry: { host: './host.tsx' },
  output: { path: path.resolve(__dirname, 'dist-host'), filename: '[name].js', publicPath: '/static/', clean: true },
  module: {
    rules: [ts, css, { test: /\.(woff2?|ttf|eot|svg|png|jpg)$/, type: 'asset/resource' }],
  },
};

module.exports = [plugin, host];
