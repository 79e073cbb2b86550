/**
 * The GraphiQL page (/graphiql): the IDE from a CDN, pointed at /graphql. Credentials go in its
 * Headers tab (`{"Authorization": "Bearer <key>"}`); the page itself needs none.
 */
export const GRAPHIQL_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>svcdb GraphiQL</title>
  <style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
  <link rel="stylesheet" href="https://unpkg.com/graphiql@3/graphiql.min.css">
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script crossorigin src="https://unpkg.com/react@18/umd/react.production.min.js"></script>
  <script crossorigin src="https://unpkg.com/react-dom@18/umd/react-dom.production.min.js"></script>
  <script crossorigin src="https://unpkg.com/graphiql@3/graphiql.min.js"></script>
  <script>
    const fetcher = GraphiQL.createFetcher({ url: new URL('/graphql', location.href).toString() });
    ReactDOM.createRoot(document.getElementById('graphiql')).render(
      React.createElement(GraphiQL, { fetcher, defaultHeaders: '{"Authorization": "Bearer <API key>"}' }),
    );
  </script>
</body>
</html>
`;
