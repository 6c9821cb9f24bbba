import { Effect, Option } from "effect"
import { DesignChatApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../http/Area.ts"
import { requireCompany } from "../auth/Authentication.ts"
import { maxBodyDocumentChars } from "../campaigns/Api.ts"
import * as Campaigns from "../campaigns/Campaigns.ts"
import { checkEditable } from "../campaigns/CampaignStates.ts"
import { Blob } from "../files/Blob.ts"
import { FilesRepo } from "../files/FilesRepo.ts"
import type { ContentPart } from "../llm/Llm.ts"
import { authorizedAnswer } from "../http/Refusals.ts"
import { brandGuide, withBrand } from "../brand/BrandGuide.ts"
import { BadRequest } from "../platform/Errors.ts"
import type { Refusal } from "../platform/Refusal.ts"
import * as Templates from "../templates/Templates.ts"
import { payerOf } from "../usage/Credits.ts"
import { conversation, open, systemPrompt, templatePrompt } from "./DesignChat.ts"

const api = areaApi(DesignChatApi)

const write = authorizedAnswer("campaigns:write")

/** An error the model reads: the API error's message. */
const messageOf = (error: { readonly error: string } | Refusal) => "refusal" in error ? error.message : error.error

/** The template's uploads named by `attachments`, as image parts; 400 naming one that is not. */
const attachedImages = (companyId: string, templateId: string, attachments: ReadonlyArray<string>) =>
  Effect.forEach(attachments, (id) =>
    Effect.gen(function*() {
      const unknown = new BadRequest({ error: `attachments: ${id} is not an upload of this template` })
      const file = yield* FilesRepo.use((repo) => repo.get(id))
      if (Option.isNone(file) || file.value.companyId !== companyId || file.value.ownerId !== templateId) {
        return yield* unknown
      }
      const blob = yield* Blob.use((store) => store.get(id))
      if (Option.isNone(blob)) return yield* unknown
      const part: ContentPart = { type: "image", mediaType: file.value.contentType, data: Buffer.from(blob.value.bytes).toString("base64") }
      return part
    }))

export const DesignChatLive = HttpApiBuilder.group(api, "designChat", (handlers) =>
  handlers
    .handle("campaignChat", ({ params, payload }) =>
      write(Effect.gen(function*() {
        const principal = yield* requireCompany(payload.companyId)
        const campaign = yield* Campaigns.find(principal.companyId, params.campaignId)
        yield* checkEditable(campaign.status, "change the body of")
        const services = yield* Effect.context<
          Effect.Services<ReturnType<typeof Campaigns.update> | ReturnType<typeof Campaigns.saveBodyVersion>>
        >()
        return yield* open({
          payer: payerOf(principal),
          feature: "campaigns",
          system: withBrand(systemPrompt, yield* brandGuide(principal.companyId)),
          messages: conversation(payload.history, payload.message),
          html: payload.bodyDocument.html,
          version: campaign.bodyVersion,
          target: {
            maxHtmlChars: maxBodyDocumentChars,
            saveHtml: (html) =>
              Campaigns.saveBodyVersion(principal.companyId, campaign.id, { ...payload.bodyDocument, html }, "chat").pipe(
                Effect.map((saved) => ({ version: saved.bodyVersion, bodyDocument: saved.bodyDocument })),
                Effect.mapError(messageOf),
                Effect.provideContext(services)
              ),
            setSubject: (subject) =>
              Campaigns.update(campaign.id, { subject }).pipe(
                Effect.asVoid,
                Effect.mapError(messageOf),
                Effect.provideContext(services)
              )
          }
        })
      })))
    .handle("templateChat", ({ params, payload }) =>
      write(Effect.gen(function*() {
        const principal = yield* requireCompany(payload.companyId)
        const template = yield* Templates.findTemplate(principal.companyId, params.templateId)
        const images = yield* attachedImages(principal.companyId, template.id, payload.attachments ?? [])
        const services = yield* Effect.context<Effect.Services<ReturnType<typeof Templates.update>>>()
        return yield* open({
          payer: payerOf(principal),
          feature: "campaigns",
          system: withBrand(`${systemPrompt}\n${templatePrompt}`, yield* brandGuide(principal.companyId)),
          messages: conversation(payload.history, payload.message, images),
          html: payload.bodyDocument.html,
          version: template.bodyVersion,
          target: {
            maxHtmlChars: maxBodyDocumentChars,
            saveHtml: (html) =>
              Templates.update(template.id, { bodyDocument: { ...payload.bodyDocument, html } }).pipe(
                Effect.map((saved) => ({ version: saved.bodyVersion, bodyDocument: saved.bodyDocument })),
                Effect.mapError(messageOf),
                Effect.provideContext(services)
              ),
            setSubject: (subject) =>
              Templates.update(template.id, { subject }).pipe(
                Effect.asVoid,
                Effect.mapError(messageOf),
                Effect.provideContext(services)
              )
          }
        })
      }))))
