/**
 * The floor of any gateway, for `npm run bench:gateway`: an HTTP relay in a process of its own that passes each
 * request to the upstream and its answer back byte for byte (keep-alive connections, streamed bodies), reading
 * nothing of MCP and deciding nothing. What a call through it costs above the direct call is what one more process
 * and one more hop cost on this machine, before any authentication, policy or audit.
 *
 * Started with UPSTREAM_URL; sends { url } over IPC once it listens and stops when its parent disconnects.
 */
import http from "node:http";

const upstream = new URL(process.env.UPSTREAM_URL!);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

const server = http.createServer((req, res) => {
  const out = http.request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host }, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  out.on("error", () => res.headersSent ? res.destroy() : res.writeHead(502).end());
  req.pipe(out);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  process.send?.({ url: `http://127.0.0.1:${port}${upstream.pathname}` });
});
process.on("disconnect", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
