// `npm run docs:console`: screenshots of the web console's main pages for the README
// (docs/console-<page>.png), taken from the running console in the service's own headless
// Chromium. It builds the console when stale, starts the service from source on an in-memory
// embedded database on a free loopback port, seeds a company with a billed call and a sent
// campaign, signs in with its personal access key and shoots each page.
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer } from "node:http"
import { join } from "node:path"
import * as Admin from "../src/admin/Admin.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { makeServer } from "../src/app/Server.ts"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { spend } from "../test/support/Billing.ts"
import { consolePages, openPage, sentCampaign, signIn, withConsolePage } from "../test/support/Console.ts"
import { freePort } from "./bench/children.ts"
import { ensureConsoleBuilt, root } from "./build.ts"

/** Seeds a company with billed calls and a sent campaign, then shoots each page of the console at `base`. */
const shoot = (base: string) => Effect.gen(function*() {
  const tenant = yield* Admin.bootstrap({ organization: "Acme", company: "Acme Shop", email: "owner@acme.example" })
  for (const [model, feature, credits] of [["smart", "chat", 12], ["fast", "content", 5], ["smart", "tasks", 8]] as const) {
    yield* spend({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }, { model, feature, credits })
  }
  yield* sentCampaign(base, tenant)
  yield* withConsolePage(async (page) => {
    await page.goto(`${base}/`)
    await page.screenshot({ path: join(root, "docs", "console-sign-in.png") })
    await signIn(page, base, tenant)
    for (const name of consolePages) {
      await openPage(page, name)
      if (name === "campaigns") {
        await page.getByRole("button", { name: "Spring sale" }).click()
        await page.getByTestId("metric-total").waitFor()
      }
      await page.screenshot({ path: join(root, "docs", `console-${name}.png`), fullPage: true })
    }
  })
  console.log(`docs/console-{sign-in,${consolePages.join(",")}}.png written`)
})

const main = Effect.gen(function*() {
  const port = yield* Effect.promise(freePort)
  const server = makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port }), inMemoryStorage, { logAddress: false }).pipe(
    Layer.provide(settingsWith({ adminApiKey: Option.some(Redacted.make("docs-console")), logLevel: "Error", bootstrap: false }))
  )
  yield* shoot(`http://127.0.0.1:${port}`).pipe(Effect.provide(server))
})

ensureConsoleBuilt()
NodeRuntime.runMain(main)
