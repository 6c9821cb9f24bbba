import { NodeHttpServer } from "@effect/platform-node"
import Anthropic from "@anthropic-ai/sdk"
import { Effect, Layer } from "effect"
import OpenAI from "openai"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import { makeServer } from "../../src/app/Server.ts"
import type { SettingOverrides } from "../../src/app/Settings.ts"
import { seedTenant, testConfig } from "./TestServer.ts"

/**
 * The whole service listening on a real loopback port, for clients that
 * bring their own HTTP stack (the official OpenAI and Anthropic SDKs).
 */
export const loopbackServer = <A, E>(storage: Layer.Layer<A, E>, overrides: SettingOverrides = {}) =>
  makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }), storage, { logAddress: false }).pipe(
    Layer.provideMerge(testConfig(overrides))
  )

/** Where the loopback server listens, e.g. `http://127.0.0.1:41234`. */
export const serverUrl = HttpServer.HttpServer.useSync((server) =>
  server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`)

/** A fresh tenant and both official SDKs aimed at the loopback server, authenticated with its company key. */
export const sdkClients = (name: string) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant(name)
    const base = yield* serverUrl
    return {
      tenant,
      openai: new OpenAI({ apiKey: tenant.apiKey, baseURL: `${base}/api/v0`, maxRetries: 0 }),
      anthropic: new Anthropic({ apiKey: tenant.apiKey, baseURL: `${base}/api/v0/anthropic`, maxRetries: 0 })
    }
  })

/** How an OpenAI SDK call failed: its status and our `{"error": …}` message (the SDK reads the body's `error` field); undefined when it succeeded. */
export const sdkError = (call: () => Promise<unknown>) =>
  Effect.promise(() =>
    call().then(
      () => undefined,
      (error: InstanceType<typeof OpenAI.APIError>) => ({ status: error.status, error: error.error })
    )
  )
