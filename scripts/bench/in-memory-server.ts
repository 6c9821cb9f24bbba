// Ours on in-memory PGlite, from source, in its own process: the server the
// gateway and garbage-collection benchmarks load.
// `node scripts/bench/in-memory-server.ts <port> <stub upstream URL>` runs it;
// `startInMemoryServer` spawns it, with `nodeArgs` if any, and waits until it answers.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer, Option, Redacted } from "effect"
import { createServer } from "node:http"
import { inMemoryStorage } from "../../src/app/Storage.ts"
import { makeServer } from "../../src/app/Server.ts"
import { settingsWith } from "../../src/app/Settings.ts"
import { freePort, spawnChild, waitUntilReady } from "./children.ts"

/** Our gateways route model `bench` to the stub as upstream model `stub`. */
export const benchModels = [{ id: "bench", provider: "openai" as const, upstream: "stub" }]

/** The settings that point the built server's model `bench` at the stub upstream at `stubUrl`. */
export const builtServerBehindStub = (stubUrl: string) => ({
  LLM_MODELS: JSON.stringify(benchModels),
  OPENAI_BASE_URL: stubUrl,
  LOG_LEVEL: "Error"
})

const adminKey = "bench-admin-key"

export const startInMemoryServer = async (
  stubUrl: string,
  options: { readonly nodeArgs?: ReadonlyArray<string> } = {}
) => {
  const port = await freePort()
  const child = spawnChild(process.execPath, [...(options.nodeArgs ?? []), import.meta.filename, String(port), stubUrl], {
    server: "ours on in-memory PGlite"
  })
  const baseUrl = `http://127.0.0.1:${port}`
  await waitUntilReady(child, `${baseUrl}/health`)
  return { child, baseUrl, adminKey }
}

if (import.meta.main) {
  const [port, stubUrl] = process.argv.slice(2)
  Layer.launch(makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(port) }), inMemoryStorage, { logAddress: false }).pipe(
    Layer.provide(settingsWith({
      adminApiKey: Option.some(Redacted.make(adminKey)),
      rateLimitPerMinute: 1_000_000_000,
      logLevel: "Error",
      bootstrap: false,
      llmModels: Option.some(benchModels),
      openaiBaseUrl: Option.some(stubUrl)
    }))
  )).pipe(NodeRuntime.runMain)
}
