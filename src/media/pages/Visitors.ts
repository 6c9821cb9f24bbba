import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { RateLimiter } from "../../auth/RateLimiter.ts"
import { Leads, type LeadContact } from "../../outreach/leads/Leads.ts"
import { Email } from "../../platform/Schemas.ts"
import { currentDate } from "../../platform/Time.ts"
import { emit } from "../../storage/Outbox.ts"
import { sharedReads } from "../../storage/SharedRead.ts"
import { InvalidSubmission, NotPublished, TooManySubmissions } from "./Errors.ts"
import { PagesConfig } from "./PagesConfig.ts"
import { type PageAddress, PagesRepo, type PublishedRecord } from "./PagesRepo.ts"
import { PageTraffic } from "./PageTraffic.ts"
import { honeypotField } from "./Rendering.ts"

/**
 * What the public side of landing pages does for a visitor: serve a
 * published page (counting the view) and take its form's submissions
 * (rate-limited per address and page, honeypot-checked) as leads.
 */

/** Who is asking: the address (never stored) and user agent. */
export interface Visitor {
  readonly address: string
  readonly userAgent: string
}

/**
 * Published pages by address, from the database. Concurrent lookups share one
 * statement sent after they asked (`sharedReads`), so a lookup never answers
 * what a change committed before it replaced, and a burst of requests costs
 * one round trip. Serving keeps what it looked up (`PublicHttp.ts`).
 */
export class PublishedPages extends Context.Service<PublishedPages, {
  readonly find: (address: PageAddress) => Effect.Effect<PublishedRecord, NotPublished>
}>()("pages/PublishedPages") {
  static readonly layer = Layer.effect(PublishedPages, Effect.gen(function*() {
    const repo = yield* PagesRepo
    const keyOf = (address: PageAddress) => `${address.company}/${address.page}`
    const read = sharedReads(
      (keys: ReadonlySet<string>) =>
        Effect.map(
          repo.published([...keys].map((key) => {
            const [company, page] = key.split("/")
            return { company: company!, page: page! }
          })),
          (rows) => new Map(rows.map((row) => [`${row.companySlug}/${row.slug}`, row]))
        ),
      Effect.runForkWith(yield* Effect.context<never>())
    )
    return {
      find: (address) =>
        address.company.includes("/") || address.page.includes("/")
          ? Effect.fail(new NotPublished({}))
          : Effect.flatMap(read([keyOf(address)]), (pages) => {
            const page = pages.get(keyOf(address))
            return page === undefined ? Effect.fail(new NotPublished({})) : Effect.succeed(page)
          })
    }
  }))
}

/** Counts a view of the page by `visitor` (in memory, see `PageTraffic`). */
export const countView = (pageId: string, visitor: Visitor) =>
  Effect.flatMap(currentDate, (now) => PageTraffic.use((traffic) => traffic.viewed(pageId, visitor.address, visitor.userAgent, now)))

/** The lead fields a form may fill; any other field becomes a custom field of the lead. */
const contactFields = ["firstName", "lastName", "company", "title", "phone", "website", "linkedinUrl"] as const

const isEmail = Schema.is(Email)

/** The submission's values as text (a JSON form may send numbers and booleans), empty ones left out. */
const textOf = (fields: Readonly<Record<string, string | number | boolean | null>>) =>
  Object.fromEntries(
    Object.entries(fields).flatMap(([name, value]) =>
      value === null || String(value).trim() === "" ? [] : [[name, String(value).trim()]]
    )
  )

/** The lead a submission describes; 400 naming `email` when it has none or an invalid one. */
const contactOf = (values: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const { email, [honeypotField]: _, ...rest } = values
    if (email === undefined) return yield* new InvalidSubmission({ field: "email", problem: "is required" })
    if (!isEmail(email)) return yield* new InvalidSubmission({ field: "email", problem: "must be an email address" })
    const known: Record<string, string> = {}
    const custom: Record<string, string> = {}
    for (const [name, value] of Object.entries(rest)) {
      if ((contactFields as ReadonlyArray<string>).includes(name)) known[name] = value
      else custom[name] = value
    }
    return { contact: { email, ...known, fields: custom } satisfies LeadContact, custom }
  })

/**
 * Takes a submission of the form of the page at `address`: rate-limited per
 * address and page; a filled-in honeypot is dropped silently; otherwise the
 * lead is upserted with a `form_submitted` activity, the day's submissions
 * counted and `landing_page.submitted` emitted, in one transaction. Answers
 * the page (for its thank-you address).
 */
export const submit = Effect.fn("Visitors.submit")(function*(
  address: PageAddress,
  fields: Readonly<Record<string, string | number | boolean | null>>,
  visitor: Visitor
) {
  const page = yield* PublishedPages.use((pages) => pages.find(address))
  const { submissionsPerMinute } = yield* PagesConfig
  const { decision } = yield* RateLimiter.use((limiter) =>
    limiter.take(`landing-page-submit:${page.id}:${visitor.address}`, submissionsPerMinute))
  if (!decision.allowed) return yield* new TooManySubmissions({ retryAfterSeconds: decision.retryAfterSeconds })
  const values = textOf(fields)
  if ((values[honeypotField] ?? "") !== "") return page
  const { contact, custom } = yield* contactOf(values)
  const now = yield* currentDate
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.all([
    Leads.use((leads) =>
      leads.record([{
        companyId: page.companyId,
        type: "form_submitted",
        at: now,
        contact,
        pageId: page.id,
        detail: { slug: page.slug, fields: custom }
      }])),
    PageTraffic.use((traffic) => traffic.submitted(page.id, now)),
    emit(page.companyId, "landing_page.submitted", {
      pageId: page.id,
      slug: page.slug,
      email: contact.email,
      fields: values,
      submittedAt: now.toISOString()
    })
  ])).pipe(Effect.orDie)
  return page
})
