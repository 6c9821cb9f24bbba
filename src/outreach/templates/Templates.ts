import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import * as Files from "../../media/files/Files.ts"
import { uploadedFile } from "../../http/Uploads.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { NewTemplate, Template, TemplatePatch, TemplateUpload } from "./Api.ts"
import { type TemplateRecord, TemplatesRepo } from "./TemplatesRepo.ts"
import { TemplateNotFound } from "./Errors.ts"
import { TemplatesConfig } from "./TemplatesConfig.ts"

/** Campaign templates of the caller's company, and the images uploaded to them. Decisions in docs/files.md. */

export const toTemplate = (record: TemplateRecord): typeof Template.Type => ({
  id: record.id,
  name: record.name,
  subject: record.subject,
  bodyDocument: record.bodyDocument,
  bodyVersion: record.bodyVersion,
  created_date: record.createdAt.toISOString(),
  updated_date: record.updatedAt.toISOString()
})

const found = (id: string) => orRefuse(() => new TemplateNotFound({ id }))

export const findTemplate = (companyId: string, id: string) =>
  Effect.flatMap(TemplatesRepo.use((repo) => repo.get(companyId, id)), found(id))

export const create = Effect.fn("Templates.create")(function*(input: typeof NewTemplate.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(input.companyId)
  const now = yield* currentDate
  const created = yield* TemplatesRepo.use((repo) =>
    repo.create({
      id: newId("tpl"),
      companyId: principal.companyId,
      userId: principal.userId,
      name: input.name,
      subject: input.subject ?? "",
      bodyDocument: input.bodyDocument ?? {},
      bodyVersion: 1,
      createdAt: now,
      updatedAt: now
    })
  )
  return toTemplate(created)
})

export const list = Effect.fn("Templates.list")(function*(request: PageRequest) {
  const { principal } = yield* Authorized("campaigns:read")
  const { rows, total } = yield* TemplatesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(rows.map(toTemplate), total, request)
})

export const get = Effect.fn("Templates.get")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:read")
  return toTemplate(yield* findTemplate(principal.companyId, id))
})

export const update = Effect.fn("Templates.update")(function*(id: string, patch: typeof TemplatePatch.Type) {
  yield* Authorized("campaigns:write")
  const principal = yield* requireCompany(patch.companyId)
  const { companyId: _, ...change } = patch
  const now = yield* currentDate
  const updated = yield* TemplatesRepo.use((repo) => repo.update(principal.companyId, id, change, now))
  return toTemplate(yield* found(id)(updated))
})

export const remove = Effect.fn("Templates.remove")(function*(id: string) {
  const { principal } = yield* Authorized("campaigns:write")
  const removed = yield* found(id)(yield* TemplatesRepo.use((repo) => repo.remove(principal.companyId, id)))
  yield* Files.removeOwned(principal.companyId, id)
  return toTemplate(removed)
})

/** Stores the uploaded image of part `file` for the template; answers it with its public URL. */
export const upload = Effect.fn("Templates.upload")(function*(
  templateId: string,
  request: HttpServerRequest.HttpServerRequest
) {
  const { principal } = yield* Authorized("campaigns:write")
  const config = yield* TemplatesConfig
  yield* findTemplate(principal.companyId, templateId)
  const file = yield* Effect.scoped(Effect.flatMap(
    uploadedFile(request, "file", config.uploadMaxBytes),
    (upload) => Files.storeImage(principal.companyId, templateId, upload)
  ))
  const stored: typeof TemplateUpload.Type = {
    id: file.id,
    templateId,
    name: file.name,
    contentType: file.contentType,
    size: file.size,
    width: file.width,
    height: file.height,
    url: yield* Files.publicUrl(file)
  }
  return stored
})
