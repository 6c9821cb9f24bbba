// The benchmark's reference point: the least a Node HTTP server can do for a
// small JSON answer, in its own process like the service under test.
import { createServer } from "node:http"

const body = JSON.stringify({ status: "ok" })

createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  response.end(body)
}).listen(Number(process.env.PORT), "127.0.0.1")
