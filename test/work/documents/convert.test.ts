import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Credits } from "../../../src/accounts/usage/Credits.ts"
import { onLiveClock } from "../../support/SchedulerTest.ts"
import { tokenCounter } from "../../../src/models/llm/Tokenizer.ts"
import { documentDefaults } from "../../../src/work/documents/DocumentsConfig.ts"
import { addPerson, backends, client, pgliteStorage, seedTenant, testServer } from "../../support/TestServer.ts"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { docxFile, pdfFile, pptxFile, sparseXlsxFile, withLyingSizes, xlsxFile, zipFile } from "../../support/DocumentFixtures.ts"
import { type Upload, uploadForm } from "../../support/Uploads.ts"
import { expectErrorResponse, send } from "../../support/Http.ts"
import { HttpClientRequest } from "effect/http"
import { settledOrganization, usageHistory } from "../../support/Usage.ts"

const convert = (apiKey: string, files: ReadonlyArray<Upload>, fields: Record<string, string> = {}) =>
  Effect.flatMap(client({ apiKey }), (api) => api.documents.convert({ payload: uploadForm(files, fields) }))

/** The 400 message a rejected upload answers with. */
const rejection = (apiKey: string, files: ReadonlyArray<Upload>, fields: Record<string, string> = {}) =>
  Effect.map(Effect.flip(convert(apiKey, files, fields)), (error) => ({ tag: error._tag, error: "error" in error ? error.error : "" }))

const every = Effect.gen(function*() {
  return [
    { name: "notes.txt", bytes: "Plain notes.\nSecond line." },
    { name: "readme.md", bytes: "# Guide\n\n- step one\n- step two\n" },
    { name: "prices.csv", bytes: "product,price\nTea,3\n\"Coffee, large\",4\n" },
    { name: "config.json", bytes: "{\"plan\":\"pro\",\"seats\":[1,2]}", type: "application/json" },
    { name: "page.html", bytes: "<!doctype html><html><head><title>T</title><script>alert(1)</script></head><body><h1>Welcome</h1><p>Hello <b>there</b> <img src=\"http://10.0.0.1/x.png\" alt=\"logo\"></p><ul><li>a</li><li>b</li></ul></body></html>" },
    { name: "report.pdf", bytes: yield* Effect.promise(() => pdfFile([["Quarterly report", "Revenue grew."], ["Page two text"]])) },
    {
      name: "memo.docx",
      bytes: yield* Effect.promise(() =>
        docxFile({ title: "Memo", paragraphs: ["Dear team,"], bullets: ["first", "second"], table: [["Name", "Role"], ["Ada", "Engineer"]] })
      )
    },
    { name: "sales.xlsx", bytes: yield* Effect.promise(() => xlsxFile({ Sales: [["Region", "Total"], ["North", 10], ["South", 20]] })) },
    { name: "deck.pptx", bytes: yield* Effect.promise(() => pptxFile([["Launch plan", "Goals for Q3"], ["Thank you"]])) }
  ] satisfies ReadonlyArray<Upload>
})

/** Small limits, so that hostile files are cheap to make. */
const tight = {
  ...documentDefaults,
  maxFiles: 3,
  maxFileBytes: 700_000,
  maxTotalBytes: 1_000_000,
  maxUnzippedBytes: 1_000_000,
  maxZipEntries: 100
}

describe.each(backends)("document conversion on $name", ({ storage }) => {
  // The live clock: the per-file time limit is real time, as in production.
  it.layer(onLiveClock(testServer(storage)))("", (it) => {
    it.effect("converts every format to Markdown, in the order sent, with sniffed types and token counts", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const files = yield* every
        const { documents } = yield* convert(tenant.apiKey, files)
        expect(documents.map((d) => [d.name, d.type])).toEqual([
          ["notes.txt", "txt"],
          ["readme.md", "md"],
          ["prices.csv", "csv"],
          ["config.json", "json"],
          ["page.html", "html"],
          ["report.pdf", "pdf"],
          ["memo.docx", "docx"],
          ["sales.xlsx", "xlsx"],
          ["deck.pptx", "pptx"]
        ])
        const content = Object.fromEntries(documents.map((d) => [d.type, d.content]))
        expect(content.txt).toBe("Plain notes.\nSecond line.")
        expect(content.md).toBe("# Guide\n\n- step one\n- step two")
        expect(content.csv).toBe("| product | price |\n| --- | --- |\n| Tea | 3 |\n| Coffee, large | 4 |")
        expect(content.json).toBe("```json\n{\n  \"plan\": \"pro\",\n  \"seats\": [\n    1,\n    2\n  ]\n}\n```")
        expect(content.html).toMatch(/^# Welcome\n\nHello \*\*there\*\* \[logo\]\n\n-\s+a\n-\s+b$/)
        expect(content.html).not.toContain("alert")
        expect(content.pdf).toBe("Quarterly report\n\nRevenue grew.\n\nPage two text")
        expect(content.docx).toMatch(/^# Memo\n\nDear team,\n\n-\s+first\n-\s+second\n\n\| Name\s+\| Role\s+\|\n\| --- \| --- \|\n\| Ada\s+\| Engineer \|$/)
        expect(content.xlsx).toBe("## Sales\n\n| Region | Total |\n| --- | --- |\n| North | 10 |\n| South | 20 |")
        expect(content.pptx).toBe("## Slide 1\n\nLaunch plan\n\nGoals for Q3\n\n## Slide 2\n\nThank you")
        const counter = yield* tokenCounter
        for (const document of documents) {
          expect(document.tokens).toBe(yield* counter.text(document.content))
          expect(document.tokens).toBeGreaterThan(0)
          expect(document.summary).toBeUndefined()
        }
      }))

    it.effect("the type comes from the bytes: names and declared types are only hints", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const pdf = yield* Effect.promise(() => pdfFile([["Disguised"]]))
        const docx = yield* Effect.promise(() => docxFile({ title: "Hidden", paragraphs: [] }))
        const { documents } = yield* convert(tenant.apiKey, [
          { name: "notes.txt", bytes: pdf, type: "text/plain" },
          { name: "sheet.xlsx", bytes: docx, type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" },
          { name: "data.txt", bytes: "a;b;c\n1;2;3\n" },
          { name: "page.pdf", bytes: "<html><body><p>Not a PDF</p></body></html>", type: "application/pdf" }
        ])
        expect(documents.map((d) => [d.type, d.content])).toEqual([
          ["pdf", "Disguised"],
          ["docx", "# Hidden"],
          ["csv", "| a | b | c |\n| --- | --- | --- |\n| 1 | 2 | 3 |"],
          ["html", "Not a PDF"]
        ])
      }))

    it.effect("ragged tables: the header spans the widest row, short rows stay short (the text grows with the file, not rows × width)", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const { documents } = yield* convert(tenant.apiKey, [
          { name: "ragged.csv", bytes: "a,b\n1,2,3,\n4\n" },
          { name: "wide.csv", bytes: `${Array.from({ length: 2_000 }, () => "h").join(",")}\n${"x\n".repeat(2_000)}` }
        ])
        expect(documents[0].content).toBe("| a | b |  |  |\n| --- | --- | --- | --- |\n| 1 | 2 | 3 |\n| 4 |")
        expect(documents[1].content.split("\n")).toHaveLength(2_002)
        expect(documents[1].content.length).toBeLessThan(20 * 4_000)
      }))

    it.effect("a sheet's empty columns are dropped: cells in Excel's last column make no row of 16,384 cells", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const far = Array.from({ length: 2_000 }, (_, i) => [i + 1, 16_384, `far ${i}`] as const)
        const bytes = yield* Effect.promise(() => sparseXlsxFile([[1, 2, "name"], [2, 2, "Ada"], ...far]))
        const { documents } = yield* convert(tenant.apiKey, [{ name: "far.xlsx", bytes }])
        const lines = documents[0].content.split("\n")
        expect(lines.slice(0, 5)).toEqual(["## Sparse", "", "| name | far 0 |", "| --- | --- |", "| Ada | far 1 |"])
        expect(lines).toHaveLength(2_003)
        expect(lines.at(-1)).toBe("|  | far 1999 |")
      }))

    it.effect("without generateSummary, or below the threshold, no summary; above it the model writes one, billed under documents", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const long = Array.from({ length: 800 }, (_, i) => `Sentence number ${i} about the quarterly plan.`).join(" ")
        const files = [{ name: "short.txt", bytes: "A short note." }, { name: "long.txt", bytes: long }]
        const plain = yield* convert(tenant.apiKey, files)
        expect(plain.documents.every((d) => d.summary === undefined)).toBe(true)
        const { documents } = yield* convert(tenant.apiKey, files, { generateSummary: "true" })
        expect(documents[0].summary).toBeUndefined()
        expect(documents[1].tokens).toBeGreaterThan(documentDefaults.summaryMinTokens)
        expect(documents[1].summary).toEqual(expect.any(String))
        expect(documents[1].summary!.length).toBeGreaterThan(0)
        const { events } = yield* usageHistory(tenant.organizationId)
        expect(events).toHaveLength(1)
        expect(events[0]).toMatchObject({ feature: "documents", companyId: tenant.companyId })
        expect(events[0].inputTokens).toBeGreaterThan(0)
        expect(events[0].credits).toBeGreaterThan(0)
      }))

    it.effect("a bad form answers 400 naming the field", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const post = (body: FormData | string, contentType?: string) => {
          const request = HttpClientRequest.post("/api/v0/documents/convert").pipe(
            HttpClientRequest.setHeader("x-api-key", tenant.apiKey)
          )
          return send(
            typeof body === "string"
              ? HttpClientRequest.bodyText(request, body, contentType)
              : HttpClientRequest.bodyFormData(request, body)
          )
        }
        expectErrorResponse(yield* post(uploadForm([], { companyId: tenant.companyId })), 400, "files")
        expectErrorResponse(yield* post(uploadForm([{ name: "a.txt", bytes: "x" }], { generateSummary: "yes" })), 400, "generateSummary")
        expectErrorResponse(yield* post(uploadForm([{ name: "a.txt", bytes: "x" }], { summary: "true" })), 400, "Unknown field \"summary\"")
        const noFileName = new FormData()
        noFileName.append("files", "just text")
        expectErrorResponse(yield* post(noFileName), 400, "files")
        expectErrorResponse(yield* post("--x\r\nbroken", "multipart/form-data; boundary=x"), 400)
      }))

    it.effect("credentials, roles and tenancy: 401 without a key, 403 for viewers, 404 for another company", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const viewer = yield* addPerson(tenant, { companyRole: "viewer" })
        const files = [{ name: "a.txt", bytes: "x" }]
        expect((yield* rejection("sk_not-a-key", files)).tag).toBe("Unauthorized")
        const viewerApi = yield* client({ apiKey: viewer.personalAccessKey, companyId: tenant.companyId })
        const denied = yield* Effect.flip(viewerApi.documents.convert({ payload: uploadForm(files) }))
        expect(denied._tag).toBe("Forbidden")
        expect(yield* rejection(tenant.apiKey, files, { companyId: other.companyId })).toMatchObject({ tag: "NotFound" })
      }))
  })
})

describe("document conversion limits", () => {
  it.layer(onLiveClock(testServer(pgliteStorage, { documents: tight })))("", (it) => {
    it.effect("a summary the credits cannot cover answers 403, and nothing is billed", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const organization = Option.getOrThrow(yield* settledOrganization(tenant.organizationId))
        const credits = yield* Credits
        // Everything the organization has is held by another call in flight.
        yield* credits.hold({ organizationId: tenant.organizationId, companyId: tenant.companyId, userId: tenant.userId }, {
          feature: "chat",
          credits: organization.creditLimit - organization.creditUsage
        })
        const long = Array.from({ length: 800 }, (_, i) => `Sentence number ${i} about the plan.`).join(" ")
        const failure = yield* rejection(tenant.apiKey, [{ name: "long.txt", bytes: long }], { generateSummary: "true" })
        expect(failure).toEqual({ tag: "Forbidden", error: "Insufficient credits" })
        const { events } = yield* usageHistory(tenant.organizationId)
        expect(events.filter((event) => event.feature === "documents")).toEqual([])
      }))

    it.effect("nothing is fetched from addresses found in a document", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        let hits = 0
        const listener = yield* Effect.acquireRelease(
          Effect.promise(() => {
            const server = createHttpServer((_request, response) => {
              hits++
              response.end("fetched")
            })
            return new Promise<typeof server>((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)))
          }),
          (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
        )
        const address = listener.address()
        const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
        const html = `<html><head><link rel="stylesheet" href="${base}/style.css"><script src="${base}/app.js"></script>` +
          `<base href="${base}/"></head><body><h1>Links</h1><img src="${base}/pixel.png" alt="pixel">` +
          `<iframe src="${base}/frame"></iframe><object data="${base}/object"></object>` +
          `<p style="background: url(${base}/bg.png)"><a href="${base}/page">a link</a></p></body></html>`
        const { documents } = yield* convert(tenant.apiKey, [{ name: "links.html", bytes: html }])
        expect(documents[0].content).toBe(`# Links\n\n[pixel]\n\n[a link](${base}/page)`)
        expect(hits).toBe(0)
      }))

    it.effect("hostile and broken files answer 400 naming the file and the reason", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const good = { name: "ok.txt", bytes: "fine" }
        const bombBytes = new Uint8Array(tight.maxUnzippedBytes + 1024)
        const docxBomb = zipFile({ "[Content_Types].xml": new Uint8Array(10), "word/document.xml": bombBytes })
        const manyEntries = zipFile(
          Object.fromEntries(Array.from({ length: tight.maxZipEntries + 1 }, (_, i) => [`word/part${i}.xml`, new Uint8Array(1)]))
        )
        const cases: ReadonlyArray<readonly [Upload, RegExp]> = [
          [{ name: "secret.pdf", bytes: yield* Effect.promise(() => pdfFile([["hidden"]], { userPassword: "pw" })) }, /^File "secret\.pdf" is an encrypted PDF/],
          [{ name: "broken.pdf", bytes: `%PDF-1.7\n${"\u0001\u0002garbage".repeat(50)}` }, /^File "broken\.pdf" could not be read as a PDF/],
          [
            { name: "huge.pdf", bytes: yield* Effect.promise(() => pdfFile(Array.from({ length: documentDefaults.maxPdfPages + 500 }, () => []))) },
            new RegExp(`^File "huge\\.pdf" has ${documentDefaults.maxPdfPages + 500} pages; at most ${documentDefaults.maxPdfPages}`)
          ],
          [{ name: "bomb.docx", bytes: docxBomb }, /^File "bomb\.docx" unpacks to more than \d+ bytes \(zip bomb\?\)$/],
          [{ name: "liar.docx", bytes: withLyingSizes(docxBomb) }, /^File "liar\.docx" unpacks to more bytes than its zip entries declare/],
          [{ name: "many.docx", bytes: manyEntries }, /^File "many\.docx" has \d+ zip entries; at most \d+/],
          [{ name: "archive.zip", bytes: zipFile({ "a.txt": new Uint8Array(3) }) }, /^File "archive\.zip" is a zip archive but not a Word, Excel or PowerPoint file$/],
          [{ name: "truncated.xlsx", bytes: (yield* Effect.promise(() => xlsxFile({ A: [["x"]] }))).subarray(0, 400) }, /^File "truncated\.xlsx" could not be read as a zip archive/],
          [{ name: "deep.html", bytes: `<html><body>${"<div>".repeat(1_000)}x</body></html>` }, /^File "deep\.html" nests HTML elements more than 256 levels deep$/],
          // Refused before a tree is built: a browser's tree building takes hours over this, so the time limit would answer.
          [{ name: "deeper.html", bytes: "<div>".repeat(100_000) }, /^File "deeper\.html" nests HTML elements more than 256 levels deep$/],
          [{ name: "photo.txt", bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]) }, /^File "photo\.txt" is image\/png, which is not a supported document format$/],
          [{ name: "latin1.txt", bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe]) }, /^File "latin1\.txt" is neither a supported document format nor UTF-8 text$/],
          [{ name: "empty.txt", bytes: "" }, /^File "empty\.txt" is empty$/],
          [{ name: "deep.json", bytes: `${"[".repeat(100_000)}${"]".repeat(100_000)}` }, /^File "deep\.json" is too deeply nested to convert$/]
        ]
        for (const [upload, message] of cases) {
          const failure = yield* rejection(tenant.apiKey, [good, upload])
          expect(failure.tag, upload.name).toBe("BadRequest")
          expect(failure.error, upload.name).toMatch(message)
        }
        // The pool recovers: after all of that, conversions still work.
        expect((yield* convert(tenant.apiKey, [good])).documents[0].content).toBe("fine")
      }))

    it.effect("too many files, a file too large, or too many bytes in all: 400 naming the file", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const small = (name: string) => ({ name, bytes: "x" })
        expect(yield* rejection(tenant.apiKey, ["a", "b", "c", "d"].map((n) => small(`${n}.txt`)))).toEqual({
          tag: "BadRequest",
          error: "File \"d.txt\" is one file too many: at most 3 files per request"
        })
        expect(yield* rejection(tenant.apiKey, Array.from({ length: 20 }, (_, i) => small(`${i}.txt`)))).toEqual({
          tag: "BadRequest",
          error: "Too many parts: at most 3 files per request"
        })
        expect(yield* rejection(tenant.apiKey, [small("a.txt"), { name: "big.txt", bytes: "y".repeat(700_001) }])).toEqual({
          tag: "BadRequest",
          error: "File \"big.txt\" is 700001 bytes; at most 700000 bytes per file"
        })
        const third = { name: "c.txt", bytes: "z".repeat(500_000) }
        expect(yield* rejection(tenant.apiKey, [small("a.txt"), { ...third, name: "b.txt" }, third])).toEqual({
          tag: "BadRequest",
          error: "File \"c.txt\" brings the upload to 1000001 bytes; at most 1000000 bytes per request"
        })
        const flood = yield* rejection(tenant.apiKey, [{ name: "flood.txt", bytes: "f".repeat(1_100_000) }])
        expect(flood).toEqual({ tag: "BadRequest", error: "A file is larger than 700000 bytes, the most per file" })
        const deluge = yield* rejection(tenant.apiKey, ["a", "b", "c"].map((n) => ({ name: n, bytes: "d".repeat(650_000) })))
        expect(deluge).toEqual({ tag: "BadRequest", error: "The upload is larger than 1000000 bytes, the most per request" })
      }))

    it.effect("uploaded files are deleted before the answer goes out, however the request ends", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const folder = mkdtempSync(join(tmpdir(), "uploads-"))
        const previous = process.env.TMPDIR
        process.env.TMPDIR = folder
        try {
          yield* convert(tenant.apiKey, [{ name: "a.txt", bytes: "kept?" }])
          yield* rejection(tenant.apiKey, [{ name: "secret.pdf", bytes: yield* Effect.promise(() => pdfFile([["x"]], { userPassword: "pw" })) }])
          yield* rejection(tenant.apiKey, [{ name: "big.txt", bytes: "y".repeat(700_001) }])
          const left = readdirSync(folder, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
          expect(left).toEqual([])
        } finally {
          if (previous === undefined) delete process.env.TMPDIR
          else process.env.TMPDIR = previous
          rmSync(folder, { recursive: true, force: true })
        }
      }))
  })

  it.layer(onLiveClock(testServer(pgliteStorage, { documents: { ...documentDefaults, timeoutMs: 1 } })))("", (it) => {
    it.effect("a conversion past the time limit is stopped: 400 naming the file", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        expect(yield* rejection(tenant.apiKey, [{ name: "slow.txt", bytes: "text" }])).toEqual({
          tag: "BadRequest",
          error: "File \"slow.txt\" could not be converted within 0.001 s"
        })
      }))
  })
})
