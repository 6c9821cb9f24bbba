import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ensureConsoleBuilt } from "../../scripts/build.ts"
import { consolePolicy } from "../../src/app/Console.ts"
import { spend } from "../support/Billing.ts"
import { consolePages, openPage, sentCampaign, seriousViolations, signIn, withConsolePage } from "../support/Console.ts"
import { serverUrl } from "../support/LoopbackServer.ts"
import { client, pgliteStorage, seedTenant, testServer } from "../support/TestServer.ts"

// The server reads the built console when it starts: build it first (only when sources changed).
ensureConsoleBuilt()

const status = (base: string, key: string) => fetch(`${base}/api/v0/me`, { headers: { "x-api-key": key } }).then((response) => response.status)

it.layer(testServer(pgliteStorage), { timeout: 180_000 })("the web console in a browser", (it) => {
  it.effect("serves its page at / with a policy allowing no inline script, and /docs still", () =>
    Effect.gen(function*() {
      const base = yield* serverUrl
      const page = yield* Effect.promise(() => fetch(`${base}/`))
      expect(page.status).toBe(200)
      expect(page.headers.get("content-security-policy")).toBe(consolePolicy)
      expect(consolePolicy).toMatch(/script-src 'self'(;|$)/)
      const html = yield* Effect.promise(() => page.text())
      expect(html).not.toMatch(/<script>|<script type="module">[^<]/)
      expect((yield* Effect.promise(() => fetch(`${base}/docs`))).status).toBe(200)
      const missing = yield* Effect.promise(() => fetch(`${base}/assets/nothing.js`))
      expect(missing.status).toBe(404)
      expect(yield* Effect.promise(() => missing.json())).toEqual({ error: "No console asset nothing.js" })
    }))

  it.effect("signs in with a personal key kept in the tab's session only, creates a company key shown once and deletes it", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("console")
      const base = yield* serverUrl
      yield* withConsolePage(async (page) => {
        await page.goto(`${base}/`)
        await page.getByLabel("Personal access key").fill("pak_not_a_key")
        await page.getByLabel("Company id").fill(tenant.companyId)
        await page.getByRole("button", { name: "Sign in" }).click()
        await page.getByRole("alert").waitFor()
        await signIn(page, base, tenant)
        const storage = await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length }))
        expect(storage).toEqual({ session: 2, local: 0 })

        await page.getByLabel("Key name").fill("ci-key")
        await page.getByRole("button", { name: "Create key" }).click()
        const created = (await page.getByTestId("new-key").textContent()) ?? ""
        expect(await status(base, created)).toBe(200)
        await page.getByRole("button", { name: "Delete key ci-key" }).click()
        await page.getByRole("button", { name: "Delete key ci-key" }).waitFor({ state: "detached" })
        expect(await status(base, created)).toBe(401)
      })
    }))

  it.effect("charts the credits of a billable call per day, by model and by feature", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("usage")
      yield* spend(
        { organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId },
        { feature: "chat", model: "smart", credits: 7, inputTokens: 300, outputTokens: 100 }
      )
      const base = yield* serverUrl
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "usage")
        expect(await page.getByTestId("credits-30-days").textContent()).toBe("7")
        for (const title of ["Credits per day", "Credits per day by model", "Credits per day by feature"]) {
          const chart = page.getByRole("img", { name: new RegExp(`^${title}:`) })
          expect(await chart.locator("canvas").count()).toBe(1)
        }
        expect(await page.getByRole("img", { name: /by model: smart$/ }).count()).toBe(1)
        expect(await page.getByRole("img", { name: /by feature: chat$/ }).count()).toBe(1)
      })
    }))

  it.effect("shows a campaign's recipient metrics, a chart over time and its body in a frame without scripts", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("campaigns")
      const base = yield* serverUrl
      yield* sentCampaign(base, tenant)
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "campaigns")
        await page.getByRole("button", { name: "Spring sale" }).click()
        await page.getByTestId("metric-total").waitFor()
        expect(await page.getByTestId("metric-total").textContent()).toBe("3")
        expect(await page.getByTestId("metric-sent").textContent()).toBe("3")
        expect(await page.getByTestId("metric-opened").textContent()).toBe("1")
        // The recipients are read after the metrics: the chart draws once they are in.
        const chart = page.getByRole("img", { name: "Recipients per hour: sent, opened, clicked" }).locator("canvas")
        await chart.waitFor()
        expect(await chart.count()).toBe(1)
        const frame = page.getByTitle("Body of Spring sale")
        expect(await frame.getAttribute("sandbox")).toBe("")
        expect(await page.frameLocator("iframe.preview").getByRole("heading", { name: "Spring sale" }).count()).toBe(1)
        expect(await page.evaluate(() => (globalThis as unknown as { hacked?: boolean }).hacked)).toBeUndefined()
      })
    }))

  it.effect("lists and searches the company's leads", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("leads")
      const base = yield* serverUrl
      const api = yield* client({ apiKey: tenant.apiKey })
      yield* api.leads.create({ payload: { email: "ada@analytical.example", firstName: "Ada", company: "Analytical" } })
      yield* api.leads.create({ payload: { email: "grace@navy.example", firstName: "Grace", company: "Navy" } })
      yield* withConsolePage(async (page) => {
        await signIn(page, base, tenant)
        await openPage(page, "leads")
        expect(await page.getByRole("cell", { name: "grace@navy.example" }).count()).toBe(1)
        await page.getByLabel("Search leads").fill("analytical")
        await page.getByRole("button", { name: "Search" }).click()
        await page.getByRole("cell", { name: "grace@navy.example" }).waitFor({ state: "detached" })
        expect(await page.getByRole("cell", { name: "ada@analytical.example" }).count()).toBe(1)
      })
    }))

  it.effect("has no serious or critical accessibility violation on any page", () =>
    Effect.gen(function*() {
      const tenant = yield* seedTenant("axe")
      const base = yield* serverUrl
      yield* sentCampaign(base, tenant)
      yield* withConsolePage(async (page) => {
        await page.goto(`${base}/`)
        await page.getByLabel("Personal access key").waitFor()
        const found: Record<string, unknown> = { "sign-in": await seriousViolations(page) }
        await signIn(page, base, tenant)
        for (const name of consolePages) {
          await openPage(page, name)
          if (name === "campaigns") await page.getByRole("button", { name: "Spring sale" }).click()
          found[name] = await seriousViolations(page)
        }
        expect(found).toEqual({ "sign-in": [], integrations: [], usage: [], campaigns: [], "landing-pages": [], leads: [], inbox: [], documents: [], agents: [], profile: [] })
      })
    }))
})
