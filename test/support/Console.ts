import axe from "axe-core"
import { Effect } from "effect"
import type { Page } from "playwright-core"
import { BrowserPool } from "../../src/platform/BrowserPool.ts"
import type { Tenant } from "./TestServer.ts"

/** The console's pages, by the hash that opens each and the heading it shows. */
export const consolePages = ["integrations", "usage", "campaigns", "profile"] as const

/**
 * Runs `use` on a page of the service's own headless Chromium (the pool the
 * server uses, its requests relayed to the loopback server), failing on an
 * uncaught error of the page or a Content-Security-Policy violation.
 */
export const withConsolePage = <A>(use: (page: Page) => Promise<A>) =>
  BrowserPool.use((pool) =>
    pool.withPage({ viewport: { width: 1280, height: 900 }, locale: "en-US" }, (page, context) =>
      Effect.promise(async () => {
        // The pool's browsers reach nothing on their own (docs/canvases.md): the test fetches each request for them.
        await context.route("**/*", async (route) => route.fulfill({ response: await route.fetch() }))
        page.setDefaultTimeout(15_000)
        const errors: Array<string> = []
        // Refused calls (401 of a wrong key) and scripts the sandbox blocks are expected; a policy violation is not.
        page.on("console", (message) => void (/Content Security Policy/.test(message.text()) && errors.push(message.text())))
        page.on("pageerror", (error) => void errors.push(error.message))
        const result = await use(page).catch((error: Error) => {
          throw new Error(`${error.message}\nthe console logged: ${errors.join("; ")}`)
        })
        if (errors.length > 0) throw new Error(`the console logged errors: ${errors.join("; ")}`)
        return result
      })))

/** Signs in with the tenant's personal access key and company id; answers once the first page shows. */
export const signIn = async (page: Page, base: string, tenant: Tenant) => {
  await page.goto(`${base}/`)
  await page.getByLabel("Personal access key").fill(tenant.personalAccessKey)
  await page.getByLabel("Company id").fill(tenant.companyId)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { level: 1, name: "Integrations" }).waitFor()
}

export const openPage = async (page: Page, name: typeof consolePages[number]) => {
  await page.getByRole("link", { name: new RegExp(`^${name}$`, "i") }).click()
  await page.getByRole("heading", { level: 1, name: new RegExp(`^${name}$`, "i") }).waitFor()
  await page.waitForFunction(() => document.querySelector("[aria-busy=true]") === null)
}

/**
 * axe-core's serious and critical violations on the page as it shows now.
 * Evaluated through the browser's protocol, which the page's policy
 * (no inline scripts) does not apply to.
 */
export const seriousViolations = async (page: Page) => {
  await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    const results = await (globalThis as unknown as { axe: typeof axe }).axe.run(document)
    return results.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.length }))
  })
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
}
