import { Effect, Option } from "effect"
import { DesignChatApi } from "./Api.ts"
import { HttpApiBuilder } from "effect/http-api"
import { areaApi } from "../../http/Area.ts"
import { requireCompany } from "../../auth/Authentication.ts"
import { maxBodyDocumentChars } from "../../http/BodyVersions.ts"
import * as Campaigns from "../../outreach/campaigns/Campaigns.ts"
import { checkEditable } from "../../outreach/campaigns/CampaignStates.ts"
import { Blob } from "../../media/files/Blob.ts"
import { FilesRepo } from "../../media/files/FilesRepo.ts"
import type { ContentPart } from "../../models/llm/Llm.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { brandGuide, withBrand } from "../brand/BrandGuide.ts"
import { BadRequest } from "../../platform/Errors.ts"
import * as Templates from "../../outreach/templates/Templates.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import { conversation, open, systemPrompt, templatePrompt, toolEffect } from "./DesignChat.ts"

const api = areaApi(DesignChatApi)

const write = authorizedAnswer("campaigns:write")

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
        const tool = toolEffect(
          yield* Effect.context<Effect.Services<ReturnType<typeof Campaigns.update> | ReturnType<typeof Campaigns.saveBodyVersion>>>()
        )
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
              tool.save(Campaigns.saveBodyVersion(principal.companyId, campaign.id, { ...payload.bodyDocument, html }, "chat")),
            setSubject: (subject) => tool.change(Campaigns.update(campaign.id, { subject }))
          }
        })
      })))
    .handle("templateChat", ({ params, payload }) =>
      write(Effect.gen(function*() {
        const principal = yield* requireCompany(payload.companyId)
        const template = yield* Templates.findTemplate(principal.companyId, params.templateId)
        const images = yield* attachedImages(principal.companyId, template.id, payload.attachments ?? [])
        const tool = toolEffect(yield* Effect.context<Effect.Services<ReturnType<typeof Templates.update>>>())
        return yield* open({
          payer: payerOf(principal),
          feature: "campaigns",
          system: withBrand(`${systemPrompt}\n${templatePrompt}`, yield* brandGuide(principal.companyId)),
          messages: conversation(payload.history, payload.message, images),
          html: payload.bodyDocument.html,
          version: template.bodyVersion,
          target: {
            maxHtmlChars: maxBodyDocumentChars,
            saveHtml: (html) => tool.save(Templates.update(template.id, { bodyDocument: { ...payload.bodyDocument, html } })),
            setSubject: (subject) => tool.change(Templates.update(template.id, { subject }))
          }
        })
      }))))
