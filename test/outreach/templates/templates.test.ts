import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { HttpClientRequest } from "effect/http"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { failsWith } from "../../support/Assertions.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { gif1x1, jpeg1x1, png, webp1x1 } from "../../support/Images.ts"
import { addPerson, backends, client, pgliteStorage, seedTenant, testServer, type Tenant } from "../../support/TestServer.ts"

const owner = (tenant: Tenant) => client({ apiKey: tenant.apiKey })

/** A multipart body with one `file` part. */
const fileForm = (bytes: Uint8Array | string, name: string, type = "application/octet-stream") => {
  const form = new FormData()
  form.append("file", new Blob([bytes], { type }), name)
  return form
}

const publicGet = (url: string) => send(HttpClientRequest.get(new URL(url).pathname))

const body = { html: "<p>Hi {{firstName}}</p>", css: "p{color:red}", components: [{ type: "text" }], version: 3 }

describe.each(backends)("campaign templates on $name", ({ storage }) => {
  it.layer(testServer(storage, { templates: { uploadMaxBytes: 16 * 1024 }, publicBaseUrl: "https://mail.acme.test" }))((it) => {
    it.effect("create, read, list, patch and delete; the body document is kept as given", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const template = yield* api.templates.create({ payload: { name: "Welcome", subject: "Hello", bodyDocument: body } })
        expect(template).toMatchObject({ name: "Welcome", subject: "Hello", bodyDocument: body })
        expect(yield* api.templates.get({ params: { templateId: template.id } })).toEqual(template)
        const bare = yield* api.templates.create({ payload: { name: "Bare" } })
        expect(bare).toMatchObject({ subject: "", bodyDocument: {} })
        const page = yield* api.templates.list({ query: { pageSize: 1 } })
        expect(page).toMatchObject({ total: 2, pages: 2, hasNext: true, items: [{ id: bare.id }] })
        const patched = yield* api.templates.update({
          params: { templateId: template.id },
          payload: { bodyDocument: { html: "<p>New</p>" } }
        })
        expect(patched).toMatchObject({ name: "Welcome", subject: "Hello", bodyDocument: { html: "<p>New</p>" } })
        expect(patched.updated_date > template.updated_date).toBe(true)
        expect((yield* api.templates.delete({ params: { templateId: template.id } })).id).toBe(template.id)
        yield* failsWith(api.templates.get({ params: { templateId: template.id } }), "NotFound")
      }))

    it.effect("bad bodies answer 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const template = yield* (yield* owner(tenant)).templates.create({ payload: { name: "T" } })
        const cases = [
          ["POST", "/api/v0/marketing-campaign-templates", {}, "name"],
          ["POST", "/api/v0/marketing-campaign-templates", { name: " " }, "name"],
          ["POST", "/api/v0/marketing-campaign-templates", { name: "x", bodyDocument: { html: 42 } }, "bodyDocument.html"],
          ["POST", "/api/v0/marketing-campaign-templates", { name: "x", bodyDocument: "<p>" }, "bodyDocument"],
          ["PATCH", `/api/v0/marketing-campaign-templates/${template.id}`, { subject: "x".repeat(999) }, "subject"],
          ["PATCH", `/api/v0/marketing-campaign-templates/${template.id}`, { bodyDocument: [1] }, "bodyDocument"]
        ] as const
        for (const [method, path, payload, field] of cases) {
          expectErrorResponse(yield* send(requestWithKey(method, path, tenant.apiKey, payload)), 400, field)
        }
      }))

    it.effect("upload stores PNG, JPEG, GIF and WebP images with their sniffed type and dimensions", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const template = yield* api.templates.create({ payload: { name: "Images" } })
        const params = { templateId: template.id }
        const cases = [
          [png(640, 200), "Hero banner (final).PNG", "image/png", "Hero-banner-final.png", 640, 200],
          [jpeg1x1, "photo.jpeg", "image/jpeg", "photo.jpg", 1, 1],
          [gif1x1, "anim.gif", "image/gif", "anim.gif", 1, 1],
          // The declared name and type are ignored: the bytes say WebP.
          [webp1x1, "../../etc/passwd.png", "image/webp", "etc-passwd.webp", 1, 1]
        ] as const
        for (const [bytes, name, contentType, storedName, width, height] of cases) {
          const upload = yield* api.templates.upload({ params, payload: fileForm(bytes, name, "image/png") })
          expect(upload).toMatchObject({ templateId: template.id, name: storedName, contentType, size: bytes.length, width, height })
          expect(upload.id).toMatch(/^fil_[0-9a-f]{32}$/)
          expect(upload.url).toBe(`https://mail.acme.test/api/v0/public/files/${upload.id}/${storedName}`)
          const served = yield* publicGet(upload.url)
          expect(served.status).toBe(200)
          expect(served.headers).toMatchObject({
            "content-type": contentType,
            "x-content-type-options": "nosniff",
            "cache-control": "public, max-age=31536000, immutable"
          })
          const fetched = yield* api.files.publicFile({ params: { fileId: upload.id, name: storedName } })
          expect(Buffer.from(fetched).equals(Buffer.from(bytes))).toBe(true)
        }
      }))

    it.effect("anything but a whole PNG, JPEG, GIF or WebP image, or too large, is a 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* owner(tenant)
        const template = yield* api.templates.create({ payload: { name: "Refusals" } })
        const params = { templateId: template.id }
        const pdf = "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF"
        const svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>"
        const cases = [
          [fileForm("just some text", "logo.png", "image/png"), /not a PNG, JPEG, GIF or WebP image/],
          [fileForm(svg, "logo.svg", "image/svg+xml"), /not a PNG, JPEG, GIF or WebP image/],
          [fileForm(pdf, "logo.png", "image/png"), /application\/pdf/],
          [fileForm(png(100, 100).slice(0, 20), "cut.png"), /damaged/],
          [fileForm(new Uint8Array(), "empty.png"), /empty/],
          [fileForm(new Uint8Array(20 * 1024).fill(7), "big.png"), /too large: at most 16384 bytes/]
        ] as const
        for (const [form, message] of cases) yield* failsWith(api.templates.upload({ params, payload: form }), "BadRequest", message)
        const noFile = new FormData()
        noFile.append("image", new Blob([gif1x1]), "a.gif")
        yield* failsWith(api.templates.upload({ params, payload: noFile }), "BadRequest", /part named "file"/)
        const json = yield* send(
          requestWithKey("POST", `/api/v0/marketing-campaign-templates/${template.id}/upload`, tenant.apiKey, { file: "x" })
        )
        expectErrorResponse(json, 400, /multipart\/form-data/)
      }))

    it.effect("the public route answers 404 for unknown ids, wrong names and deleted templates", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const template = yield* api.templates.create({ payload: { name: "Gone soon" } })
        const upload = yield* api.templates.upload({ params: { templateId: template.id }, payload: fileForm(gif1x1, "a.gif") })
        expect((yield* publicGet(upload.url)).status).toBe(200)
        for (const path of [`fil_${"0".repeat(32)}/a.gif`, `${upload.id}/b.gif`, `${upload.id}/a.png`]) {
          expectErrorResponse(yield* send(HttpClientRequest.get(`/api/v0/public/files/${path}`)), 404, "File not found")
        }
        yield* api.templates.delete({ params: { templateId: template.id } })
        expectErrorResponse(yield* publicGet(upload.url), 404)
      }))

    it.effect("the spec's four errors: 400 no file, 401 no key, 403 role or plan, 404 other company's template", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const api = yield* owner(tenant)
        const template = yield* api.templates.create({ payload: { name: "Mine" } })
        const theirs = yield* (yield* owner(other)).templates.create({ payload: { name: "Theirs" } })
        yield* failsWith(api.templates.upload({ params: { templateId: template.id }, payload: new FormData() }), "BadRequest")
        for (const apiKey of [undefined, "sk_not-a-key"]) {
          const anonymous = yield* client({ apiKey })
          yield* failsWith(
            anonymous.templates.upload({ params: { templateId: template.id }, payload: fileForm(gif1x1, "a.gif") }),
            "Unauthorized"
          )
          yield* failsWith(anonymous.templates.list({ query: {} }), "Unauthorized")
        }
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const asViewer = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        expect((yield* asViewer.templates.get({ params: { templateId: template.id } })).name).toBe("Mine")
        yield* failsWith(
          asViewer.templates.upload({ params: { templateId: template.id }, payload: fileForm(gif1x1, "a.gif") }),
          "Forbidden"
        )
        yield* failsWith(asViewer.templates.create({ payload: { name: "No" } }), "Forbidden")
        yield* failsWith(asViewer.templates.update({ params: { templateId: template.id }, payload: { name: "No" } }), "Forbidden")
        yield* failsWith(asViewer.templates.delete({ params: { templateId: template.id } }), "Forbidden")
        const chatOnly = yield* addPerson(tenant, { companyRole: "admin", allowedFeatures: ["chat"] })
        const narrowed = yield* client({ apiKey: chatOnly.personalAccessKey, companyId: tenant.companyId })
        yield* failsWith(
          narrowed.templates.upload({ params: { templateId: template.id }, payload: fileForm(gif1x1, "a.gif") }),
          "Forbidden",
          /campaigns feature/
        )
        for (const templateId of [theirs.id, "tpl_unknown"]) {
          const params = { templateId }
          yield* failsWith(api.templates.upload({ params, payload: fileForm(gif1x1, "a.gif") }), "NotFound")
          yield* failsWith(api.templates.get({ params }), "NotFound")
          yield* failsWith(api.templates.update({ params, payload: { name: "x" } }), "NotFound")
          yield* failsWith(api.templates.delete({ params }), "NotFound")
        }
        yield* failsWith(api.templates.create({ payload: { name: "x", companyId: other.companyId } }), "NotFound")
        expect((yield* api.templates.list({ query: {} })).items.map((t) => t.id)).toEqual([template.id])
      }))
  })
})

const blobFolder = mkdtempSync(join(tmpdir(), "blob-dir-"))

describe("uploads with BLOB_DIR", () => {
  afterAll(() => rmSync(blobFolder, { recursive: true, force: true }))

  it.layer(testServer(pgliteStorage, { files: { blobDir: Option.some(blobFolder) } }))((it) => {
    it.effect("keeps the bytes in the folder and serves them from there", () =>
      Effect.gen(function*() {
        const api = yield* owner(yield* seedTenant())
        const template = yield* api.templates.create({ payload: { name: "Folder" } })
        const image = png(3, 2)
        const upload = yield* api.templates.upload({ params: { templateId: template.id }, payload: fileForm(image, "x.png") })
        expect(readFileSync(join(blobFolder, upload.id)).equals(Buffer.from(image))).toBe(true)
        const served = yield* publicGet(upload.url)
        expect(served).toMatchObject({ status: 200, headers: { "content-type": "image/png" } })
        yield* api.templates.delete({ params: { templateId: template.id } })
        expect(existsSync(join(blobFolder, upload.id))).toBe(false)
      }))
  })
})
