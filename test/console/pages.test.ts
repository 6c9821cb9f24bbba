import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ensureConsoleBuilt } from "../../scripts/build.ts"
import { EmbeddingsModel } from "../../src/work/documents/EmbeddingsModel.ts"
import { Indexer } from "../../src/work/documents/Indexer.ts"
import { KnowledgeConfig } from "../../src/work/documents/KnowledgeConfig.ts"
import { InboundQueue } from "../../src/outreach/inbox/InboundQueue.ts"
import { Ingestion } from "../../src/outreach/inbox/Ingestion.ts"
import { DeliveryWorker } from "../../src/integrations/webhooks/DeliveryWorker.ts"
import * as Admin from "../../src/accounts/admin/Admin.ts"
import { spend } from "../support/Billing.ts"
import { openPage, receivedReply, refundPolicy, seriousViolations, signIn, withConsolePage } from "../support/Console.ts"
import { serverUrl } from "../support/LoopbackServer.ts"
import { client, pgliteStorage, seedTenant } from "../support/TestServer.ts"
import { drain, receiver, verified, webhookTestServer } from "../support/WebhookTest.ts"

// The server reads the built console when it starts: build it first (only when sources changed).
ensureConsoleBuilt()

/** The service with a delivery worker and an indexer the tests drive (`drain`, `runIndexer`), and the inbound mail path. */
const server = Indexer.layer.pipe(
  Layer.provideMerge(EmbeddingsModel.layer),
  Layer.provideMerge(KnowledgeConfig.layerWith({ indexerEnabled: false })),
  Layer.provideMerge(InboundQueue.layer),
  Layer.provideMerge(Ingestion.layer),
  Layer.provideMerge(webhookTestServer(pgliteStorage))
)

it.layer(server, { timeout: 180_000 })("the console's pages in a browser", (it) => {
  it.effect("creates a webhook (secret shown once), sends a test delivery, shows its log, retries it and deletes the webhook", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("webhooks")
      const base = yield* serverUrl
      const hooks = yield* receiver
      const worker = yield* DeliveryWorker
      const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await page.getByLabel("Endpoint URL").fill(hooks.url)
        await page.getByLabel("Description (optional)").fill("CRM")
        await page.getByRole("checkbox", { name: /lead\.created/ }).check()
        await page.getByRole("button", { name: "Create webhook" }).click()
        const secret = (await page.getByTestId("webhook-secret").textContent()) ?? ""
        expect(secret).toMatch(/^whsec_/)

        await page.getByRole("button", { name: "Send a test" }).click()
        await page.getByTestId("delivery-status").waitFor()
        expect(await page.getByTestId("delivery-status").textContent()).toBe("pending")
        await run(drain(worker))
        expect(hooks.received).toHaveLength(1)
        // The receiver checks the signature with the secret the page showed once.
        expect(verified(secret, hooks.received[0]!)).toMatchObject({ type: "webhook.test" })
        await page.getByRole("button", { name: "Refresh deliveries" }).click()
        await page.getByRole("cell", { name: "delivered" }).waitFor()
        expect(await page.getByTestId("delivery-code").textContent()).toBe("200")
        expect(await page.getByRole("cell", { name: /^\d+ ms$/ }).count()).toBe(1)
        expect(await page.getByRole("cell", { name: "thanks" }).count()).toBe(1)
        expect(await seriousViolations(page)).toEqual([])

        hooks.reply = () => 503
        await page.getByRole("button", { name: "Retry the webhook.test delivery" }).click()
        await page.getByRole("cell", { name: "pending" }).waitFor()
        await run(drain(worker))
        await page.getByRole("button", { name: "Refresh deliveries" }).click()
        await page.getByTestId("delivery-code").getByText("503").waitFor()
        expect(hooks.received).toHaveLength(2)
        expect(await page.getByRole("cell", { name: "no: 503" }).count()).toBe(1)

        await page.getByRole("button", { name: `Delete webhook ${hooks.url}` }).click()
        await page.getByText("No webhooks yet.").waitFor()
      })
      const api = yield* client({ apiKey: tenant.apiKey })
      expect((yield* api.webhooks.list({ query: {} })).total).toBe(0)
    }))

  it.effect("uploads a document, shows it ready and finds it by keyword with the match highlighted", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("documents")
      const base = yield* serverUrl
      const indexer = yield* Indexer
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "documents")
        await page.getByLabel(/^Files/).setInputFiles({ name: "refunds.md", mimeType: "text/markdown", buffer: Buffer.from(refundPolicy) })
        await page.getByLabel("Tags (comma separated)").fill("policies, support")
        await page.getByRole("button", { name: "Upload" }).click()
        await page.getByRole("status").getByText("Added “refunds.md”.").waitFor()
        const row = page.getByRole("row", { name: /refunds\.md/ })
        await row.waitFor()
        expect(await row.getByRole("cell").nth(2).textContent()).toBe("policies, support")
        expect(await page.getByTestId("status-refunds.md").textContent()).toBe("indexing")
        // Indexed in the background: the list follows it until it is ready.
        expect(await Effect.runPromise(indexer.runDue)).toBe(1)
        await page.getByTestId("status-refunds.md").getByText("ready").waitFor()

        await page.getByLabel("Search documents").fill("refund within days")
        await page.getByLabel("Mode").selectOption("keyword")
        await page.getByRole("button", { name: "Search" }).click()
        await page.getByText("1 found for “refund within days” (keyword)").waitFor()
        const results = page.getByRole("list", { name: "Search results" })
        expect(await results.getByRole("listitem").count()).toBe(1)
        expect(await results.locator("mark").allTextContents()).toEqual(expect.arrayContaining(["refund", "days"]))
        expect(await seriousViolations(page)).toEqual([])

        await page.getByLabel("Search documents").fill("how long can a customer send goods back")
        await page.getByLabel("Mode").selectOption("semantic")
        await page.getByRole("button", { name: "Search" }).click()
        await page.getByText(/found for “how long can a customer send goods back” \(semantic\)/).waitFor()
        expect(await results.getByRole("listitem").first().locator("strong").textContent()).toBe("refunds.md")
      })
      const api = yield* client({ apiKey: tenant.apiKey })
      const stored = yield* api.knowledge.list({ query: {} })
      expect(stored.items.map((document) => [document.title, document.tags])).toEqual([["refunds.md", ["policies", "support"]]])
    }))

  it.effect("chats with an agent, its answer streamed, shows the conversation again from its history, and chats with an employee", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("agents")
      const base = yield* serverUrl
      const api = yield* client({ apiKey: tenant.apiKey })
      yield* api.knowledge.create({ payload: { title: "Refund policy", content: refundPolicy } })
      yield* api.agents.create({ payload: { name: "Support", instructions: "Answer customers' questions." } })
      yield* api.employees.create({ payload: { name: "Mia", role: "Marketing lead" } })
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "agents")
        expect(await page.getByRole("button", { name: "Chat with Mia" }).count()).toBe(1)
        await page.getByRole("button", { name: "Chat with Support" }).click()
        await page.getByText("No earlier conversations.").waitFor()
        await page.getByRole("textbox", { name: "Message" }).fill("How many days do customers have to return a product for a refund?")
        await page.getByRole("button", { name: "Send" }).click()
        const messages = page.getByRole("list", { name: "Messages" })
        const answer = messages.locator("li.assistant")
        await answer.getByText(/within 30 days of delivery/).waitFor()
        expect(await messages.locator("li.tool").allTextContents()).toEqual(["Tool: used search_knowledge"])
        await page.getByRole("button", { name: "Send" }).waitFor()
        expect(await seriousViolations(page)).toEqual([])

        await page.getByRole("button", { name: "New conversation" }).click()
        expect(await messages.locator("li").count()).toBe(0)
        const earlier = page.getByRole("navigation", { name: "Earlier conversations" }).getByRole("button", { name: /How many days/ })
        await earlier.click()
        await answer.getByText(/within 30 days of delivery/).waitFor()
        expect(await messages.locator("li.user").allTextContents()).toEqual(["You: How many days do customers have to return a product for a refund?"])

        // An employee is talked to the same way, under its own path.
        await page.getByRole("button", { name: "Chat with Mia" }).click()
        await page.getByRole("heading", { name: "Conversation with Mia" }).waitFor()
        await page.getByRole("textbox", { name: "Message" }).fill("What is our refund window?")
        await page.getByRole("button", { name: "Send" }).click()
        await page.getByRole("list", { name: "Messages" }).locator("li.assistant").waitFor()
        await page.getByRole("navigation", { name: "Earlier conversations" }).getByRole("button", { name: /refund window/ }).waitFor()
      })
    }))

  it.effect("lists landing pages, shows one's submissions and body in a frame without scripts, and unpublishes it", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("landing")
      const base = yield* serverUrl
      const api = yield* client({ apiKey: tenant.apiKey })
      const html = "<h1>Spring offer</h1><form><input name=\"email\"><button>Join</button></form>"
      const created = yield* api.landingPages.create({ payload: { name: "Spring", slug: "spring", bodyDocument: { html }, status: "published" } })
      const submitted = yield* Effect.promise(() =>
        fetch(`${base}${new URL(created.url!).pathname}/submit`, { method: "POST", body: new URLSearchParams({ email: "ada@example.com" }), redirect: "manual" }))
      expect(submitted.status).toBe(200)
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "landing-pages")
        const row = page.getByRole("row", { name: /Spring/ })
        expect(await row.getByRole("cell").nth(1).textContent()).toBe("published")
        await row.getByRole("button", { name: "Spring" }).click()
        await page.getByRole("heading", { name: "Landing page “Spring”" }).waitFor()
        expect(await page.getByTestId("page-submissions").textContent()).toBe("1")
        expect(await page.getByTitle("Body of Spring").getAttribute("sandbox")).toBe("")
        expect(await page.frameLocator("iframe.preview").getByText("Spring offer").count()).toBe(1)
        expect(await seriousViolations(page)).toEqual([])
        await page.getByRole("button", { name: "Unpublish" }).click()
        await page.getByRole("button", { name: "Publish", exact: true }).waitFor()
        expect(await page.getByTestId("page-status").textContent()).toBe("draft")
        // The list is read again after the change.
        await row.getByRole("cell", { name: "draft", exact: true }).waitFor()
      })
      expect((yield* api.landingPages.get({ params: { pageId: created.id } })).status).toBe("draft")
    }))

  it.effect("lists a thread with its class, shows the HTML message in a frame without scripts, drafts and sends a reply", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("inbox")
      const base = yield* serverUrl
      yield* receivedReply(tenant)
      const api = yield* client({ apiKey: tenant.apiKey })
      const settings = { host: "mail.shop.example", port: 993, secure: true, user: "sales@shop.example", password: "app-password" }
      yield* api.inbox.createMailbox({ payload: { email: "sales@shop.example", displayName: "Sales", imap: settings, smtp: settings, dailyLimit: 40 } })
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "inbox")
        const mailbox = page.getByRole("row", { name: /sales@shop\.example/ }).getByRole("cell")
        expect(await mailbox.allTextContents()).toEqual(["sales@shop.example", "Sales", "connecting", "40"])
        const row = page.getByRole("row", { name: /Your offer/ })
        expect(await row.getByRole("cell").nth(2).textContent()).toBe("interested")
        await page.getByLabel("Classification").selectOption("not_interested")
        await page.getByText("No threads.").waitFor()
        await page.getByLabel("Classification").selectOption("interested")
        await row.getByRole("button", { name: "Your offer" }).click()
        await page.getByRole("heading", { name: "Thread “Your offer”" }).waitFor()
        expect(await page.getByTestId("message-classification").textContent()).toBe("interested")
        const frame = page.getByTitle(/^Message from .*ada@customer\.example.*: Your offer$/)
        expect(await frame.getAttribute("sandbox")).toBe("")
        expect(await page.frameLocator("iframe.mail").getByText("great").count()).toBe(1)
        expect(await page.evaluate(() => (globalThis as unknown as { hacked?: boolean }).hacked)).toBeUndefined()
        expect(await seriousViolations(page)).toEqual([])

        await page.getByRole("button", { name: "Draft with AI" }).click()
        await page.waitForFunction(() =>
          ((globalThis as unknown as { document: { querySelector: (selector: string) => { value: string } | null } })
            .document.querySelector("textarea[name=text]")?.value ?? "") !== "")
        await page.getByLabel("Reply").fill("Happy to: here is our price list.")
        await page.getByRole("button", { name: "Send reply" }).click()
        const sent = page.getByRole("list", { name: "Messages" }).locator("li.outbound")
        await sent.waitFor()
        expect(await sent.textContent()).toContain("To ada@customer.example")
        expect(await page.getByLabel("Reply").inputValue()).toBe("")
      })
      const [thread] = (yield* api.inbox.listThreads({ query: {} })).items
      const full = yield* api.inbox.getThread({ params: { threadId: thread!.id }, query: {} })
      expect(full.messages.map((message) => [message.direction, message.text.trim()])).toEqual([
        ["inbound", "Sounds great, let's talk about pricing."],
        ["outbound", "Happy to: here is our price list."]
      ])
    }))

  it.effect("shows the data credits a job search spent beside the credits", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("data-credits")
      const payer = { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }
      yield* spend(payer, { feature: "jobs", credits: 1, pool: "data" })
      yield* spend(payer, { feature: "jobs", credits: 1, pool: "data" })
      const base = yield* serverUrl
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "usage")
        expect(await page.getByTestId("data-credits-used").textContent()).toBe("2")
        expect(await page.getByTestId("data-credit-limit").textContent()).toBe(String(Admin.bootstrapAllowance.dataCreditLimit))
      })
    }))

  it.effect("draws the usage charts in a browser whose language Intl refuses (en-US@posix)", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("posix")
      yield* spend(
        { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId },
        { feature: "chat", model: "smart", credits: 1234 }
      )
      const base = yield* serverUrl
      yield* withConsolePage(async (page) => {
        // The browser reports the language as a POSIX locale would set it, which Intl refuses.
        expect(await page.evaluate(() => navigator.language)).toBe("en-US@posix")
        expect(await page.evaluate(() => { try { return new Intl.NumberFormat(navigator.language).format(1) } catch (error) { return String(error) } }))
          .toMatch(/RangeError/)
        await signIn(page, base, tenant)
        await openPage(page, "usage")
        for (const title of ["Credits per day", "Credits per day by model", "Credits per day by feature"]) {
          expect(await page.getByRole("img", { name: new RegExp(`^${title}:`) }).locator("canvas").count()).toBe(1)
        }
      }, "en-US@posix")
    }))
})
