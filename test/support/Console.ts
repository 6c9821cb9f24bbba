import axe from "axe-core"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import MailComposer from "nodemailer/lib/mail-composer"
import type { Page } from "playwright-core"
import { InboundQueue } from "../../src/outreach/inbox/InboundQueue.ts"
import { BrowserPool } from "../../src/platform/BrowserPool.ts"
import type * as Admin from "../../src/accounts/admin/Admin.ts"

/** A bootstrapped organization, company and owner with its keys. */
type Tenant = Effect.Success<ReturnType<typeof Admin.bootstrap>>

/** The console's pages, by the hash that opens each and the heading it shows. */
export const consolePages = ["integrations", "usage", "campaigns", "landing-pages", "leads", "inbox", "documents", "agents", "profile"] as const

/**
 * Runs `use` on a page of the service's own headless Chromium (the pool the
 * server uses, its requests relayed to the loopback server), failing on an
 * uncaught error of the page or a Content-Security-Policy violation.
 * `locale` is the browser's language (`navigator.language`).
 */
export const withConsolePage = <A>(use: (page: Page) => Promise<A>, locale = "en-US") =>
  BrowserPool.use((pool) =>
    pool.withPage({ viewport: { width: 1280, height: 900 }, locale }, (page, context) =>
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
  const title = new RegExp(`^${name.replaceAll("-", " ")}$`, "i")
  await page.getByRole("link", { name: title }).click()
  await page.getByRole("heading", { level: 1, name: title }).waitFor()
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector: (selector: string) => unknown } }).document.querySelector("[aria-busy=true]") === null)
}

/**
 * axe-core's serious and critical violations on the page as it shows now.
 * Evaluated through the browser's protocol, which the page's policy
 * (no inline scripts) does not apply to.
 */
export const seriousViolations = async (page: Page) => {
  await page.evaluate(axe.source)
  const { passes, violations } = await page.evaluate(async () => {
    const results = await (globalThis as unknown as { axe: typeof axe }).axe.run()
    return {
      passes: results.passes.length,
      violations: results.violations.map((violation) => ({ id: violation.id, impact: violation.impact, nodes: violation.nodes.length }))
    }
  })
  // A run that checked nothing (an empty page, axe not loaded) would pass any page.
  if (passes === 0) throw new Error("axe-core checked no rule on the page")
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
}

/** A campaign created through the API, sent to three recipients: one opened and clicked an hour after the send. */
export const sentCampaign = (base: string, tenant: Tenant) => Effect.gen(function*() {
  const campaign = yield* Effect.promise(() =>
    fetch(`${base}/api/v0/marketing-campaigns`, {
      method: "POST",
      headers: { "x-api-key": tenant.apiKey, "content-type": "application/json" },
      body: JSON.stringify({
        name: "Spring sale",
        subject: "Spring",
        bodyDocument: { html: "<h1>Spring sale</h1><p>Everything half price.</p><script>parent.hacked = true</script>" }
      })
    }).then((response) => response.json() as Promise<{ id: string }>))
  const sql = yield* SqlClient.SqlClient
  const sentAt = new Date(Date.now() - 2 * 3_600_000)
  const openedAt = new Date(Date.now() - 3_600_000)
  for (const [index, opened] of [true, false, false].entries()) {
    const at = opened ? openedAt : null
    yield* sql`INSERT INTO campaign_recipients (id, campaign_id, company_id, list_row_id, email, fields, status, sent_at,
      opened, open_count, first_opened_at, last_opened_at, clicked, click_count, first_clicked_at, last_clicked_at, created_at, updated_at)
      VALUES (${`${campaign.id}_${index}`}, ${campaign.id}, ${tenant.companyId}, ${`row_${index}`}, ${`person${index}@example.com`},
      '{}'::jsonb, 'sent', ${sentAt}, ${opened}, ${opened ? 1 : 0}, ${at}, ${at}, ${opened}, ${opened ? 1 : 0}, ${at}, ${at}, ${sentAt}, ${sentAt})`
  }
  yield* sql`INSERT INTO campaign_recipient_counts (campaign_id, total, sent, opened, clicked) VALUES (${campaign.id}, 3, 3, 1, 1)`
  return campaign
}).pipe(Effect.orDie)

export const refundPolicy = "# Refund policy\n\nCustomers may return any product within 30 days of delivery for a full refund.\n"

/** An HTML reply (with a script that must not run) accepted for the tenant's company and processed by the inbound queue: classified `interested`. */
export const receivedReply = (tenant: Tenant) => Effect.gen(function*() {
  const raw = yield* Effect.promise(() => new MailComposer({
    from: "Ada <ada@customer.example>",
    to: "sales@shop.example",
    subject: "Your offer",
    text: "Sounds great, let's talk about pricing.",
    html: "<p>Sounds <b>great</b>, let's talk about pricing.</p><script>parent.hacked = true</script>"
  }).compile().build())
  const queue = yield* InboundQueue
  yield* queue.accept(raw, [{ companies: [{ companyId: tenant.companyId, mailboxId: null }] }])
  yield* queue.processPending
}).pipe(Effect.orDie)
