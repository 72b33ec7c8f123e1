// A transparent HTTP proxy for the conformance run: the official suite has no way to send a bearer token, and
// Countersign checks one on every request, so this proxy adds `Authorization: Bearer <token>` to each request it
// forwards and changes nothing else (method, path, headers including Host and Origin, body, streamed response).
//
//   node scripts/conformance-proxy.mjs <listen-port> <target-origin> <token>
import http from "node:http";

const [portArg, target, token] = process.argv.slice(2);
if (!portArg || !target || !token) {
  console.error("usage: node scripts/conformance-proxy.mjs <listen-port> <target-origin> <token>");
  process.exit(2);
}
const upstream = new URL(target);

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const out = http.request(
    { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  out.on("error", () => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end("upstream unavailable");
  });
  req.pipe(out);
  res.on("close", () => out.destroy());
});
server.listen(Number(portArg), "127.0.0.1", () => console.log(`[conformance-proxy] 127.0.0.1:${portArg} -> ${target}`));
for (const s of ["SIGINT", "SIGTERM"]) process.on(s, () => server.close(() => process.exit(0)));
