import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failsWith } from "../../support/Assertions.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

const csvForm = (csv: string) => {
  const form = new FormData()
  form.append("file", new Blob([csv], { type: "text/csv" }), "leads.csv")
  return form
}

describe.each(backends)("lead import on $name", ({ storage }) => {
  it.layer(testServer(storage, { leads: { importMaxBytes: 64 * 1024 } }))((it) => {
    it.effect("upserts by address, maps named columns, keeps others as custom fields, reports bad lines", () =>
      Effect.gen(function*() {
        const api = yield* client({ apiKey: (yield* seedTenant()).apiKey })
        const known = yield* api.leads.create({
          payload: { email: "ada@example.com", firstName: "Ada", company: "Old Co", tags: ["old"], fields: { plan: "free", kept: "yes" } }
        })
        const csv = [
          "Email,First Name,Job Title,Company,Tags,Plan,LinkedIn URL",
          "ADA@example.com,,Countess,Engines Ltd,vip; math,pro,https://linkedin.com/in/ada",
          "not-an-address,Bob,,,,,",
          "grace@example.org,Grace,Admiral,Navy,\"vip,navy\",,",
          ",NoMail,,,,,",
          "grace@example.org,Grace Again,,,,,"
        ].join("\n")
        const result = yield* api.leads.import({ payload: csvForm(csv) })
        expect(result).toEqual({
          created: 1,
          updated: 1,
          invalid: 2,
          errors: [
            { line: 3, error: "\"not-an-address\" is not a valid e-mail address" },
            { line: 5, error: "no e-mail address" }
          ]
        })
        const ada = yield* api.leads.get({ params: { leadId: known.id } })
        // The file's non-empty values win; what it leaves empty stays.
        expect(ada).toMatchObject({
          email: "ada@example.com",
          firstName: "Ada",
          title: "Countess",
          company: "Engines Ltd",
          linkedinUrl: "https://linkedin.com/in/ada",
          fields: { plan: "pro", kept: "yes" }
        })
        expect([...ada.tags].sort()).toEqual(["math", "old", "vip"])
        const grace = (yield* api.leads.list({ query: { search: "grace" } })).items
        // The later of two rows with one address wins.
        expect(grace.map((lead) => [lead.email, lead.firstName, lead.title, lead.company])).toEqual([
          ["grace@example.org", "Grace Again", "Admiral", "Navy"]
        ])
        expect([...grace[0].tags].sort()).toEqual(["navy", "vip"])

        const again = yield* api.leads.import({ payload: csvForm("email\nada@example.com\nnew@example.com\n") })
        expect(again).toEqual({ created: 1, updated: 1, invalid: 0, errors: [] })
      }))

    it.effect("a file without an email column, not CSV or too large answers 400; a viewer may not import", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        yield* failsWith(api.leads.import({ payload: csvForm("name\nAda\n") }), "BadRequest", /no email column/)
        yield* failsWith(api.leads.import({ payload: csvForm("email\n\"unterminated\n") }), "BadRequest", /not valid CSV/)
        yield* failsWith(api.leads.import({ payload: csvForm(`email\n${"a@example.com\n".repeat(6_000)}`) }), "BadRequest", /too large/)
        yield* failsWith(api.leads.import({ payload: new FormData() }), "BadRequest", /part named "file"/)
        expect((yield* api.leads.list({ query: {} })).total).toBe(0)
      }))
  })
})
