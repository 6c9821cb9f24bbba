import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClientRequest } from "effect/http"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { addPerson, backends, client, pgliteStorage, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

const rowsOf = (count: number, domain = "example.com") =>
  Array.from({ length: count }, (_, i) => ({ email: `user${i}@${domain}` }))

const owner = (tenant: Tenant) => client({ apiKey: tenant.apiKey })

describe.each(backends)("contact lists API on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("create keeps addresses as given, deduplicates them ignoring case and keeps merge fields", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const list = yield* api.lists.create({
          payload: {
            name: "Newsletter",
            rows: [
              { email: "Ada.Lovelace@Example.com", firstName: "Ada", lastName: "Lovelace", jobTitle: "Countess" },
              { email: "ada.lovelace@example.COM", firstName: "Duplicate" },
              { email: " grace@example.org ", company: "Navy", city: "Arlington" }
            ]
          }
        })
        expect(list).toMatchObject({ name: "Newsletter", rowCount: 2 })
        expect(list.created_date).toBe(list.updated_date)
        expect(yield* api.lists.get({ params: { listId: list.id } })).toEqual(list)
        const rows = yield* api.lists.listRows({ params: { listId: list.id }, query: {} })
        expect(rows).toMatchObject({ total: 2, pages: 1, hasNext: false })
        expect(rows.items.map(({ id: _, created_date: __, ...row }) => row)).toEqual([
          {
            listId: list.id,
            email: "Ada.Lovelace@Example.com",
            firstName: "Ada",
            lastName: "Lovelace",
            company: null,
            fields: { jobTitle: "Countess" }
          },
          {
            listId: list.id,
            email: "grace@example.org",
            firstName: null,
            lastName: null,
            company: "Navy",
            fields: { city: "Arlington" }
          }
        ])
      }))

    it.effect("an invalid e-mail refuses the whole call with 400 naming the row", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const rows = [{ email: "ok@example.com" }, { email: "ok2@example.com" }, { email: "not-an-address" }]
        const refused = yield* send(requestWithKey("POST", "/api/v0/lists", tenant.apiKey, { name: "Bad", rows }))
        expectErrorResponse(refused, 400, /rows\.2\.email.*valid e-mail/)
        expect((yield* api.lists.list({ query: {} })).total).toBe(0)

        const list = yield* api.lists.create({ payload: { name: "Good" } })
        for (const email of ["a@b", "a b@example.com", "x@example.com\nBcc: y@example.com", "<a@example.com>", ""]) {
          const response = yield* send(
            requestWithKey("POST", `/api/v0/lists/${list.id}/rows`, tenant.apiKey, { rows: [{ email }] })
          )
          expectErrorResponse(response, 400, "rows.0.email")
        }
        expect((yield* api.lists.get({ params: { listId: list.id } })).rowCount).toBe(0)
      }))

    it.effect("row fields are strings with merge-field names, at most 50 per row", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const list = yield* (yield* owner(tenant)).lists.create({ payload: { name: "Fields" } })
        const path = `/api/v0/lists/${list.id}/rows`
        const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, "x"]))
        const cases = [
          [{ rows: [{ email: "a@example.com", age: 42 }] }, "rows.0.age"],
          [{ rows: [{ email: "a@example.com", "job title": "x" }] }, "rows.0"],
          [{ rows: [{ email: "a@example.com", firstName: "x".repeat(1_001) }] }, "rows.0.firstName"],
          [{ rows: [{ email: "a@example.com", ...wide }] }, "rows.0"],
          [{ rows: [{ firstName: "No address" }] }, "rows.0.email"],
          [{ rows: "a@example.com" }, "rows"],
          [{}, "rows"]
        ] as const
        for (const [body, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey("POST", path, tenant.apiKey, body)), 400, field)
        }
        for (const name of ["", "   ", "x".repeat(201)]) {
          expectErrorResponse(yield* send(requestWithKey("POST", "/api/v0/lists", tenant.apiKey, { name })), 400, "name")
        }
      }))

    it.effect("append takes 10,000 rows in one call, counts duplicates, and refuses more", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const list = yield* api.lists.create({ payload: { name: "Big", rows: rowsOf(10) } })
        const appended = yield* api.lists.appendRows({ params: { listId: list.id }, payload: { rows: rowsOf(10_000) } })
        expect(appended).toMatchObject({ added: 9_990, duplicates: 10, list: { id: list.id, rowCount: 10_000 } })
        expect(appended.list.updated_date > list.updated_date).toBe(true)
        const again = yield* api.lists.appendRows({
          params: { listId: list.id },
          payload: { rows: [{ email: "USER5@EXAMPLE.COM" }, { email: "new@example.com" }, { email: "New@example.com" }] }
        })
        expect(again).toMatchObject({ added: 1, duplicates: 2, list: { rowCount: 10_001 } })
        const tooMany = yield* send(
          requestWithKey("POST", `/api/v0/lists/${list.id}/rows`, tenant.apiKey, { rows: rowsOf(10_001, "x.io") })
        )
        expectErrorResponse(tooMany, 400, "rows")
        const page = yield* api.lists.listRows({ params: { listId: list.id }, query: { page: 401, pageSize: 25 } })
        expect(page).toMatchObject({ total: 10_001, pages: 401, hasNext: false })
        expect(page.items.map((row) => row.email)).toEqual(["new@example.com"])
      }))

    it.effect("rows page in the order they were added; search matches e-mail, names and company", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const list = yield* api.lists.create({
          payload: {
            name: "Search",
            rows: [
              { email: "alice@acme.test", firstName: "Alice" },
              { email: "bob@example.com", lastName: "Acmeson" },
              { email: "carol@example.com", company: "ACME Corp" },
              { email: "dave@example.com" },
              { email: "percent%@example.com" }
            ]
          }
        })
        const emails = (query: { readonly search?: string; readonly page?: number; readonly pageSize?: number }) =>
          Effect.map(api.lists.listRows({ params: { listId: list.id }, query }), (page) => ({
            emails: page.items.map((row) => row.email),
            total: page.total
          }))
        expect(yield* emails({ search: "acme" })).toEqual({
          emails: ["alice@acme.test", "bob@example.com", "carol@example.com"],
          total: 3
        })
        expect(yield* emails({ search: "DAVE" })).toEqual({ emails: ["dave@example.com"], total: 1 })
        expect(yield* emails({ search: "%" })).toEqual({ emails: ["percent%@example.com"], total: 1 })
        expect(yield* emails({ search: "_" })).toEqual({ emails: [], total: 0 })
        expect(yield* emails({ page: 2, pageSize: 2 })).toEqual({
          emails: ["carol@example.com", "dave@example.com"],
          total: 5
        })
        for (const query of ["pageSize=0", "pageSize=101", "page=0", "page=x"]) {
          const response = yield* send(requestWithKey("GET", `/api/v0/lists/${list.id}/rows?${query}`, tenant.apiKey))
          expectErrorResponse(response, 400, query.split("=")[0])
        }
      }))

    it.effect("deleting a row lowers the count; deleting the list removes it and its rows", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const list = yield* api.lists.create({ payload: { name: "Short", rows: rowsOf(3) } })
        const [first] = (yield* api.lists.listRows({ params: { listId: list.id }, query: {} })).items
        const removed = yield* api.lists.deleteRow({ params: { listId: list.id, rowId: first.id } })
        expect(removed).toEqual(first)
        expect((yield* api.lists.get({ params: { listId: list.id } })).rowCount).toBe(2)
        yield* failsWith(api.lists.deleteRow({ params: { listId: list.id, rowId: first.id } }), "NotFound")
        // The address may come back once its row is gone.
        const back = yield* api.lists.appendRows({ params: { listId: list.id }, payload: { rows: [{ email: first.email }] } })
        expect(back.added).toBe(1)
        expect((yield* api.lists.delete({ params: { listId: list.id } })).id).toBe(list.id)
        yield* failsWith(api.lists.get({ params: { listId: list.id } }), "NotFound")
        yield* failsWith(api.lists.listRows({ params: { listId: list.id }, query: {} }), "NotFound")
        expect((yield* api.lists.list({ query: {} })).items.map((l) => l.id)).not.toContain(list.id)
      }))

    it.effect("lists page newest first in the generic envelope", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        for (const name of ["one", "two", "three"]) yield* api.lists.create({ payload: { name } })
        const first = yield* api.lists.list({ query: { pageSize: 2 } })
        expect(first).toMatchObject({ total: 3, pages: 2, hasNext: true })
        expect(first.items.map((list) => list.name)).toEqual(["three", "two"])
      }))

    it.effect("another company's lists and rows are 404 on every endpoint", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const theirs = yield* (yield* owner(other)).lists.create({ payload: { name: "Theirs", rows: rowsOf(2) } })
        const theirRow = (yield* (yield* owner(other)).lists.listRows({ params: { listId: theirs.id }, query: {} })).items[0]
        const api = yield* owner(tenant)
        const mine = yield* api.lists.create({ payload: { name: "Mine", rows: rowsOf(1) } })
        for (const listId of [theirs.id, "lst_unknown"]) {
          const params = { listId }
          yield* failsWith(api.lists.get({ params }), "NotFound")
          yield* failsWith(api.lists.delete({ params }), "NotFound")
          yield* failsWith(api.lists.listRows({ params, query: {} }), "NotFound")
          yield* failsWith(api.lists.appendRows({ params, payload: { rows: rowsOf(1) } }), "NotFound")
          yield* failsWith(api.lists.deleteRow({ params: { listId, rowId: theirRow.id } }), "NotFound")
          yield* failsWith(api.lists.import({ params, payload: csvForm("email\nx@example.com\n") }), "NotFound")
        }
        // A row of their list is not reachable through mine either.
        yield* failsWith(api.lists.deleteRow({ params: { listId: mine.id, rowId: theirRow.id } }), "NotFound")
        yield* failsWith(api.lists.create({ payload: { name: "x", companyId: other.companyId } }), "NotFound")
        expect((yield* api.lists.list({ query: {} })).items.map((l) => l.id)).toEqual([mine.id])
        expect((yield* (yield* owner(other)).lists.get({ params: { listId: theirs.id } })).rowCount).toBe(2)
      }))

    it.effect("401 without a key; viewers read but cannot write; the campaigns feature is required", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const list = yield* (yield* owner(tenant)).lists.create({ payload: { name: "Team" } })
        for (const apiKey of [undefined, "sk_not-a-key"]) {
          const anonymous = yield* client({ apiKey })
          yield* failsWith(anonymous.lists.list({ query: {} }), "Unauthorized")
          yield* failsWith(anonymous.lists.import({ params: { listId: list.id }, payload: csvForm("email\n") }), "Unauthorized")
        }
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const asViewer = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* asViewer.lists.get({ params: { listId: list.id } })).name).toBe("Team")
        yield* failsWith(asViewer.lists.create({ payload: { name: "No" } }), "Forbidden", /viewer/)
        yield* failsWith(asViewer.lists.appendRows({ params: { listId: list.id }, payload: { rows: rowsOf(1) } }), "Forbidden")
        yield* failsWith(asViewer.lists.import({ params: { listId: list.id }, payload: csvForm("email\n") }), "Forbidden")
        yield* failsWith(asViewer.lists.delete({ params: { listId: list.id } }), "Forbidden")
        yield* failsWith(asViewer.lists.deleteSuppression({ params: { email: "a@example.com" } }), "Forbidden")
        const chatOnly = yield* addPerson(tenant, { companyRole: "member", allowedFeatures: ["chat"] })
        const narrowed = yield* client({ apiKey: chatOnly.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(narrowed.lists.list({ query: {} }), "Forbidden", /campaigns feature/)
        yield* failsWith(narrowed.lists.listSuppressions({ query: {} }), "Forbidden", /campaigns feature/)
        const member = yield* addPerson(tenant, { companyRole: "member" })
        const asMember = yield* client({ apiKey: member.personalAccessKey, companyId: tenant.companyId })
        expect((yield* asMember.lists.appendRows({ params: { listId: list.id }, payload: { rows: rowsOf(1) } })).added)
          .toBe(1)
      }))
  })
})

/** A multipart body with one `file` part holding `csv`. */
export const csvForm = (csv: string | Uint8Array, name = "contacts.csv") => {
  const form = new FormData()
  form.append("file", new Blob([csv], { type: "text/csv" }), name)
  return form
}

describe.each(backends)("CSV import on $name", ({ storage }) => {
  it.layer(testServer(storage, { leads: { importMaxBytes: 64 * 1024 } }))((it) => {
    it.effect("maps the header row, keeps other columns as merge fields, and reports bad rows by line", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const list = yield* api.lists.create({ payload: { name: "Imported", rows: [{ email: "kept@example.com" }] } })
        const csv = [
          "\uFEFFE-mail Address,First Name,Surname,Organisation,Job Title,",
          "ada@example.com,Ada,Lovelace,\"Analytical Engines, Ltd\",Countess,ignored",
          "",
          "not-an-address,Bad,Row,,,",
          "\"multi@example.com\",\"Multi",
          "Line\",Person,,,",
          "KEPT@example.com,Again,,,,",
          ",No address,,,,",
          "grace@example.com,Grace,Hopper,Navy,\"Rear \"\"Amazing\"\" Admiral\""
        ].join("\r\n")
        const result = yield* api.lists.import({ params: { listId: list.id }, payload: csvForm(csv) })
        expect(result).toMatchObject({
          added: 3,
          duplicates: 1,
          invalid: 2,
          errors: [
            { line: 4, error: "\"not-an-address\" is not a valid e-mail address" },
            { line: 8, error: "no e-mail address" }
          ],
          list: { rowCount: 4 }
        })
        const rows = (yield* api.lists.listRows({ params: { listId: list.id }, query: {} })).items
        expect(rows.map(({ email, firstName, lastName, company, fields }) => ({ email, firstName, lastName, company, fields })))
          .toEqual([
            { email: "kept@example.com", firstName: null, lastName: null, company: null, fields: {} },
            {
              email: "ada@example.com",
              firstName: "Ada",
              lastName: "Lovelace",
              company: "Analytical Engines, Ltd",
              fields: { jobTitle: "Countess" }
            },
            { email: "multi@example.com", firstName: "Multi\r\nLine", lastName: "Person", company: null, fields: {} },
            {
              email: "grace@example.com",
              firstName: "Grace",
              lastName: "Hopper",
              company: "Navy",
              fields: { jobTitle: "Rear \"Amazing\" Admiral" }
            }
          ])
      }))

    it.effect("refuses files that are not usable CSV with 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const list = yield* api.lists.create({ payload: { name: "Refusals" } })
        const params = { listId: list.id }
        const cases: ReadonlyArray<readonly [string | Uint8Array, RegExp]> = [
          ["", /empty/],
          ["name,phone\nAda,123\n", /no email column/],
          ["email,First Name,first_name\na@example.com,x,y\n", /columns 2 and 3 both name "firstName"/],
          ["email,#\na@example.com,1\n", /column 2/],
          ["email\n\"unterminated@example.com\n", /not valid CSV/],
          ["email\n" + "a".repeat(70 * 1024) + "\n", /too large/]
        ]
        for (const [csv, message] of cases) {
          yield* failsWith(api.lists.import({ params, payload: csvForm(csv) }), "BadRequest", message)
        }
        const noFile = new FormData()
        noFile.append("other", "x")
        yield* failsWith(api.lists.import({ params, payload: noFile }), "BadRequest", /part named "file"/)
        const twoFiles = csvForm("email\n")
        twoFiles.append("file", new Blob(["email\n"]), "b.csv")
        yield* failsWith(api.lists.import({ params, payload: twoFiles }), "BadRequest", /one file/)
        const json = yield* send(requestWithKey("POST", `/api/v0/lists/${list.id}/import`, tenant.apiKey, { file: "x" }))
        expectErrorResponse(json, 400, /multipart\/form-data/)
        const garbled = yield* send(
          HttpClientRequest.post(`/api/v0/lists/${list.id}/import`).pipe(
            HttpClientRequest.setHeader("x-api-key", tenant.apiKey),
            HttpClientRequest.bodyText("--x\r\nnot a part", "multipart/form-data; boundary=x")
          )
        )
        expectErrorResponse(garbled, 400)
        expect((yield* api.lists.get({ params })).rowCount).toBe(0)
      }))

    it.effect("a cell with a NUL character is a bad row, not a failure", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const list = yield* api.lists.create({ payload: { name: "Nul" } })
        const result = yield* api.lists.import({
          params: { listId: list.id },
          payload: csvForm("email,note\nok@example.com,fine\nnul@example.com,a\u0000b\n")
        })
        expect(result).toMatchObject({ added: 1, invalid: 1, errors: [{ line: 3, error: "column \"note\" contains a NUL character" }] })
      }))
  })
})

describe.each(backends)("suppression list API on $name", ({ storage }) => {
  it.layer(testServer(storage))((it) => {
    it.effect("addresses are suppressed once, ignoring case, listed newest first and removed", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const first = yield* api.lists.addSuppression({ payload: { email: "Gone@Example.com" } })
        expect(first).toMatchObject({ email: "Gone@Example.com", reason: "manual" })
        expect(yield* api.lists.addSuppression({ payload: { email: "gone@example.com" } })).toEqual(first)
        yield* api.lists.addSuppression({ payload: { email: "other@example.org" } })
        const all = yield* api.lists.listSuppressions({ query: {} })
        expect(all).toMatchObject({ total: 2, hasNext: false })
        const found = yield* api.lists.listSuppressions({ query: { search: "EXAMPLE.COM" } })
        expect(found.items.map((s) => s.email)).toEqual(["Gone@Example.com"])
        expect(yield* api.lists.deleteSuppression({ params: { email: "GONE@example.com" } })).toEqual(first)
        yield* failsWith(api.lists.deleteSuppression({ params: { email: "gone@example.com" } }), "NotFound")
        const refused = yield* send(requestWithKey("POST", "/api/v0/suppressions", tenant.apiKey, { email: "nope" }))
        expectErrorResponse(refused, 400, "email")
      }))

    it.effect("each company has its own suppression list", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const other = yield* owner(yield* seedTenant("other"))
        yield* other.lists.addSuppression({ payload: { email: "theirs@example.com" } })
        expect((yield* api.lists.listSuppressions({ query: {} })).total).toBe(0)
        yield* failsWith(api.lists.deleteSuppression({ params: { email: "theirs@example.com" } }), "NotFound")
        expect((yield* other.lists.listSuppressions({ query: {} })).total).toBe(1)
      }))
  })
})

describe("CSV import limits", () => {
  it.layer(testServer(pgliteStorage))((it) => {
    it.effect("more than 100,000 rows, or one record over 64 KiB, answers 400 and stores nothing", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const list = yield* api.lists.create({ payload: { name: "Limits" } })
        const params = { listId: list.id }
        const tooManyRows = "email\n" + Array.from({ length: 100_001 }, (_, i) => `p${i}@x.io`).join("\n")
        yield* failsWith(api.lists.import({ params, payload: csvForm(tooManyRows) }), "BadRequest", /at most 100000 rows/)
        const hugeRecord = `email,note\na@x.io,"${"n".repeat(70 * 1024)}"\n`
        yield* failsWith(api.lists.import({ params, payload: csvForm(hugeRecord) }), "BadRequest", /not valid CSV/)
        expect((yield* api.lists.get({ params })).rowCount).toBe(0)
        const exactly = "email\n" + Array.from({ length: 100_000 }, (_, i) => `p${i}@x.io`).join("\n")
        expect((yield* api.lists.import({ params, payload: csvForm(exactly) })).list.rowCount).toBe(100_000)
      }), { timeout: 120_000 })
  })
})
