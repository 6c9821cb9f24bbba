import { Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { GuardedFetch } from "../../src/platform/Outbound.ts"
import type { OutboundSettings } from "../../src/platform/OutboundPolicy.ts"
import { OutboundConfig } from "../../src/platform/OutboundPolicy.ts"
import { DeliveryWorker } from "../../src/integrations/webhooks/DeliveryWorker.ts"
import { WebhooksConfig, type WebhooksSettings } from "../../src/integrations/webhooks/WebhooksConfig.ts"
import { onLiveClock } from "./SchedulerTest.ts"
import { testServer } from "./TestServer.ts"

/** One request a receiver got. */
export interface Received {
  readonly headers: Record<string, string>
  readonly body: string
}

/** What the receiver does with a request: answer a status, or hold it unanswered until the connection closes. */
export type Reply = number | "hold"

/**
 * A local HTTP endpoint receiving webhooks, as a customer's would: it records
 * every request and answers what `reply` says (200 unless told otherwise).
 */
export interface WebhookReceiver {
  readonly url: string
  readonly received: Array<Received>
  reply: (request: Received, index: number) => Reply
  /** Settles when `count` requests have arrived. */
  readonly arrived: (count: number) => Promise<void>
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<WebhookReceiver> => {
  const waiting: Array<{ readonly count: number; readonly resolve: () => void }> = []
  const receiver: WebhookReceiver = {
    url: "",
    received: [],
    reply: () => 200,
    arrived: (count) =>
      receiver.received.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const received = {
        headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
        body: Buffer.concat(chunks).toString("utf8")
      }
      const index = receiver.received.push(received) - 1
      for (const waiter of waiting.filter((waiter) => receiver.received.length >= waiter.count)) {
        waiting.splice(waiting.indexOf(waiter), 1)
        waiter.resolve()
      }
      const reply = receiver.reply(received, index)
      if (reply === "hold") return
      response.writeHead(reply, { "content-type": "text/plain" }).end(reply < 300 ? "thanks" : `no: ${reply}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo
  return Object.assign(receiver, { url: `http://127.0.0.1:${port}/hooks` })
}

/** A receiver for the scope. */
export const receiver = Effect.acquireRelease(
  Effect.promise(startReceiver),
  (receiver) => Effect.promise(() => receiver.close())
)

/**
 * The parsed event after checking its signature with the `standardwebhooks`
 * library, as a receiver would; throws when the signature does not verify.
 */
export const verified = (secret: string, request: Received) => new Webhook(secret).verify(request.body, request.headers)

/** The loopback receivers of the tests are allowed by name, as an operator would allow an internal endpoint. */
export const receiverAllowed: Partial<OutboundSettings> = { allowedHosts: ["127.0.0.1"] }

/**
 * `server` plus a `DeliveryWorker` over the same storage; no background
 * worker runs: tests call `runDue` and move time with `TestClock`.
 * `outbound` are the worker's guard's settings.
 */
export const withDeliveries = <A, E, R>(
  server: Layer.Layer<A, E, R>,
  settings: Partial<WebhooksSettings> = {},
  outbound: Partial<OutboundSettings> = receiverAllowed
) =>
  DeliveryWorker.layer.pipe(
    // Fresh: the server builds `GuardedFetch.layer` too, and a layer is built once per reference.
    Layer.provideMerge(Layer.fresh(GuardedFetch.layer).pipe(Layer.provide(OutboundConfig.layerWith(outbound)))),
    Layer.provideMerge(WebhooksConfig.layerWith({ workerEnabled: false, ...settings })),
    Layer.provideMerge(server)
  )

/** The test server, whose webhooks may point at the loopback receivers, with a `DeliveryWorker` (`withDeliveries`). */
export const webhookTestServer = <A, E>(
  storage: Layer.Layer<A, E>,
  settings: Partial<WebhooksSettings> = {},
  outbound: Partial<OutboundSettings> = receiverAllowed
) => withDeliveries(testServer(onLiveClock(storage), { outbound: receiverAllowed }), settings, outbound)

/** Polls `worker` until a poll finds nothing; answers how many deliveries and events the polls found. */
export const drain = (worker: DeliveryWorker["Service"]) =>
  Effect.gen(function*() {
    let found = 0
    while (true) {
      const count = yield* worker.runDue
      if (count === 0) return found
      found += count
    }
  })
