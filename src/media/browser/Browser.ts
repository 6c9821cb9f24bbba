import { Effect } from "effect"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import type { ExtractInput } from "./Api.ts"
import { BrowserExtract } from "./Extract.ts"

/** `POST /browser/extract`: the caller's company pays nothing; its screenshot is the company's public file. */
export const extract = Effect.fn("Browser.extract")(function*(input: typeof ExtractInput.Type) {
  yield* Authorized("content:use")
  const principal = yield* requireCompany(input.companyId)
  return yield* BrowserExtract.use((browser) => browser.extract(principal.companyId, input))
})
