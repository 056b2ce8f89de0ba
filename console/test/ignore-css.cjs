// PatternFly's components require their stylesheets (the console loads them); in node, a
// stylesheet is nothing.
require.extensions['.css'] = () => {};
