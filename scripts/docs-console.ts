// `npm run docs:console`: screenshots of the web console's main pages for the README
// (docs/console-<page>.png), taken from the running console in the service's own headless
// Chromium. It builds the console when stale, starts the service from source on an in-memory
// embedded database on a free loopback port, seeds a company with billed calls, a sent campaign,
// a webhook with a test delivered to a loopback receiver, documents, an inbox reply and an
// agent's conversation, signs in with its personal access key and shoots each page.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { makeServer } from "../src/app/Server.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { EmbeddingsModel } from "../src/work/documents/EmbeddingsModel.ts"
import { Indexer } from "../src/work/documents/Indexer.ts"
import { KnowledgeConfig } from "../src/work/documents/KnowledgeConfig.ts"
import { InboundQueue } from "../src/outreach/inbox/InboundQueue.ts"
import { Ingestion } from "../src/outreach/inbox/Ingestion.ts"
import { DeliveryWorker } from "../src/integrations/webhooks/DeliveryWorker.ts"
import { spend } from "../test/support/Billing.ts"
import { consolePages, openPage, receivedReply, refundPolicy, sentCampaign, signIn, withConsolePage } from "../test/support/Console.ts"
import { drain, withDeliveries } from "../test/support/WebhookTest.ts"
import { freePort } from "./bench/children.ts"
import { ensureConsoleBuilt, root } from "./build.ts"

/** A loopback endpoint answering every webhook with 200, as a customer's system would. */
const receiver = Effect.acquireRelease(
  Effect.promise(() => new Promise<ReturnType<typeof createServer>>((resolve) => {
    const server = createServer((_, response) => void response.writeHead(200, { "content-type": "text/plain" }).end("received"))
    server.listen(0, "127.0.0.1", () => resolve(server))
  })),
  (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** Seeds a company with usage, a campaign, a landing page, a webhook, documents, a reply and a conversation, then shoots each page at `base`. */
const shoot = (base: string) => Effect.gen(function*() {
  const tenant = yield* Admin.bootstrap({ organization: "Acme", company: "Acme Shop", email: "owner@acme.example" })
  const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }
  for (const [model, feature, credits] of [["smart", "chat", 12], ["fast", "content", 5], ["smart", "tasks", 8]] as const) {
    yield* spend(payer, { model, feature, credits })
  }
  yield* spend(payer, { feature: "jobs", credits: 1, pool: "data" })
  yield* sentCampaign(base, tenant)
  const api = <A extends { id: string } = { id: string }>(method: string, path: string, body: unknown) =>
    Effect.promise(() =>
      fetch(`${base}/api/v0${path}`, { method, headers: { "x-api-key": tenant.apiKey, "content-type": "application/json" }, body: JSON.stringify(body) })
        .then((response) => response.json() as Promise<A>))
  const hooks = yield* receiver
  const webhook = yield* api("POST", "/webhooks", {
    url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`,
    events: ["lead.created", "inbox.reply_received"],
    description: "CRM"
  })
  yield* api("POST", `/webhooks/${webhook.id}/test`, {})
  yield* api("POST", "/documents", { title: "Refund policy", content: refundPolicy, tags: ["policies"] })
  yield* api("POST", "/documents", { title: "Onboarding guide", content: "# Onboarding\n\nNew employees receive a laptop on their first day.", tags: ["hr"] })
  yield* receivedReply(tenant)
  const agent = yield* api("POST", "/agents", { name: "Support", description: "answers customers", instructions: "Answer customers' questions." })
  yield* api("POST", `/agents/${agent.id}/chat`, { message: "How many days do customers have to return a product?", stream: false })
  const landing = yield* api<{ id: string; url: string }>("POST", "/landing-pages", {
    name: "Spring launch",
    slug: "spring",
    status: "published",
    bodyDocument: { html: "<h1>Spring launch</h1><p>Early access for our newsletter readers.</p><form><input name=\"email\" placeholder=\"you@example.com\"><button>Join</button></form>" }
  })
  const published = `${base}${new URL(landing.url).pathname}`
  yield* Effect.promise(() => fetch(published))
  yield* Effect.promise(() => fetch(`${published}/submit`, { method: "POST", body: new URLSearchParams({ email: "ada@example.com" }) }))
  yield* drain(yield* DeliveryWorker)
  yield* Indexer.use((indexer) => indexer.runDue)
  yield* withConsolePage(async (page) => {
    await page.goto(`${base}/`)
    await page.screenshot({ path: join(root, "docs", "console-sign-in.png") })
    await signIn(page, base, tenant)
    for (const name of consolePages) {
      await openPage(page, name)
      if (name === "integrations") await page.getByRole("button", { name: "Show deliveries" }).click()
      if (name === "campaigns") await page.getByRole("button", { name: "Spring sale" }).click()
      if (name === "landing-pages") await page.getByRole("button", { name: "Spring launch" }).click()
      if (name === "inbox") await page.getByRole("button", { name: "Your offer" }).click()
      if (name === "documents") {
        await page.getByLabel("Search documents").fill("refund days")
        await page.getByRole("button", { name: "Search" }).click()
        await page.getByRole("list", { name: "Search results" }).waitFor()
      }
      if (name === "agents") {
        await page.getByRole("button", { name: "Chat with Support" }).click()
        await page.getByRole("navigation", { name: "Earlier conversations" }).getByRole("button", { name: /How many days/ }).click()
        await page.getByRole("list", { name: "Messages" }).locator("li.assistant").waitFor()
      }
      await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector: (selector: string) => unknown } }).document.querySelector("[aria-busy=true]") === null)
      await page.screenshot({ path: join(root, "docs", `console-${name}.png`), fullPage: true })
    }
  })
  console.log(`docs/console-{sign-in,${consolePages.join(",")}}.png written`)
})

const main = Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const server = makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port }), inMemoryStorage, { logAddress: false }).pipe(
    Layer.provideMerge(settingsWith({
      adminApiKey: Option.some(Redacted.make("docs-console")),
      logLevel: "Error",
      bootstrap: false,
      outbound: { allowedHosts: ["127.0.0.1"] }
    }))
  )
  yield* shoot(`http://127.0.0.1:${port}`).pipe(Effect.scoped, Effect.provide(Indexer.layer.pipe(
    Layer.provideMerge(EmbeddingsModel.layer),
    Layer.provideMerge(KnowledgeConfig.layerWith({ indexerEnabled: false })),
    Layer.provideMerge(InboundQueue.layer),
    Layer.provideMerge(InboundQueue.layer),
  Layer.provideMerge(Ingestion.layer),
    Layer.provideMerge(withDeliveries(server))
  )))
})

ensureConsoleBuilt()
NodeRuntime.runMain(main)
