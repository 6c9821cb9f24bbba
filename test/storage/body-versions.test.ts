import { expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { versionedHtml } from "../../src/media/canvases/CanvasesRepo.ts"
import { newId } from "../../src/platform/Ids.ts"
import { bodyVersions, documentVersions, type VersionSource } from "../../src/storage/BodyVersions.ts"
import { jsonParam } from "../../src/storage/Rows.ts"
import { backends, seedTenant } from "../support/TestServer.ts"

const t0 = new Date("2026-06-01T08:00:00Z")
const t1 = new Date("2026-06-01T09:00:00Z")
const t2 = new Date("2026-06-01T10:00:00Z")
const t3 = new Date("2026-06-01T11:00:00Z")
const everything = { offset: 0, limit: 10 }

/** A body document whose versions name only their row; a canvas's HTML (`versionedHtml`) is the kind whose versions carry the company. */
const campaignBodies = documentVersions("campaign_versions", "campaignId")

for (const backend of backends) {
  it.layer(backend.storage)(`body versions on ${backend.name}`, (it) => {
    it.effect("the statement changing a body saves its version: none without a body or a change; restore saves an old body again", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        const versions = bodyVersions(sql, campaignBodies)
        const id = newId("cpg")
        const created = yield* versions.saving(
          sql`
            INSERT INTO campaigns (id, company_id, name, subject, status, body_document, body_version, created_at, updated_at)
            VALUES (${id}, ${tenant.companyId}, 'Spring', 'Hello', 'draft', ${jsonParam({ html: "" })}::jsonb, 0, ${t0}, ${t0})
            RETURNING *`,
          "api",
          t0
        )
        expect(created.map((row) => row.id)).toEqual([id])
        expect(yield* versions.list(id, everything)).toEqual({ rows: [], total: 0 })

        const save = (document: object | undefined, source: VersionSource | undefined, at: Date) =>
          versions.saving(
            sql`
              UPDATE campaigns SET name = 'Renamed',
                body_document = coalesce(${document === undefined ? null : jsonParam(document)}::jsonb, body_document),
                body_version = body_version + ${document === undefined ? 0 : 1}
              WHERE id = ${id}
              RETURNING *`,
            source,
            at
          )
        yield* save({ html: "<p>one</p>", css: "p{}" }, "api", t1)
        yield* save(undefined, undefined, t1)
        yield* save({ html: "<p>two</p>" }, "chat", t2)
        const first = Option.getOrThrow(yield* versions.get(id, 1))
        expect(first).toEqual({ campaignId: id, version: 1, source: "api", createdAt: t1, bodyDocument: { html: "<p>one</p>", css: "p{}" } })
        const [restored] = yield* save(first.bodyDocument, "restore", t3)
        expect(restored).toMatchObject({ body_version: 3, body_document: first.bodyDocument })

        expect(yield* versions.list(id, everything)).toEqual({
          total: 3,
          rows: [
            { campaignId: id, version: 3, source: "restore", createdAt: t3 },
            { campaignId: id, version: 2, source: "chat", createdAt: t2 },
            { campaignId: id, version: 1, source: "api", createdAt: t1 }
          ]
        })
        expect(yield* versions.list(id, { offset: 1, limit: 1 })).toEqual({
          total: 3,
          rows: [{ campaignId: id, version: 2, source: "chat", createdAt: t2 }]
        })
        expect(Option.isNone(yield* versions.get(id, 4))).toBe(true)
      }))

    it.effect("versions that carry the company are written with it and read only within it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenant = yield* seedTenant()
        const other = yield* seedTenant("other")
        const versions = bodyVersions(sql, versionedHtml)
        const id = newId("cnv")
        yield* versions.saving(
          sql`
            INSERT INTO canvases (id, company_id, title, html, html_version, created_at, updated_at)
            VALUES (${id}, ${tenant.companyId}, 'Canvas', '<p>hi</p>', 1, ${t0}, ${t0})
            RETURNING *`,
          "api",
          t0
        )
        const unchanged = yield* versions.saving(
          sql`UPDATE canvases SET html = 'lost', html_version = html_version + 1 WHERE id = 'cnv_missing' RETURNING *`,
          "api",
          t1
        )
        expect(unchanged).toEqual([])

        expect(yield* versions.list(id, everything, tenant.companyId)).toEqual({
          total: 1,
          rows: [{ canvasId: id, version: 1, source: "api", createdAt: t0 }]
        })
        expect(Option.getOrThrow(yield* versions.get(id, 1, tenant.companyId)).html).toBe("<p>hi</p>")
        expect(yield* versions.list(id, everything, other.companyId)).toEqual({ rows: [], total: 0 })
        expect(Option.isNone(yield* versions.get(id, 1, other.companyId))).toBe(true)
      }))
  })
}
