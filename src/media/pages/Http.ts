import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { requireCompany } from "../../auth/Authentication.ts"
import { brandGuide, withBrand } from "../../work/brand/BrandGuide.ts"
import { maxBodyDocumentChars } from "../../http/BodyVersions.ts"
import { conversation, landingPagePrompt, open, systemPrompt, toolEffect } from "../../work/design/DesignChat.ts"
import { areaApi } from "../../http/Area.ts"
import { authorizedAnswer } from "../../http/Refusals.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import { payerOf } from "../../accounts/usage/Credits.ts"
import { LandingPagesApi } from "./Api.ts"
import * as Pages from "./Pages.ts"

const api = areaApi(LandingPagesApi)

const read = authorizedAnswer("landingPages:read")
const write = authorizedAnswer("landingPages:write")

export const LandingPagesLive = HttpApiBuilder.group(api, "landingPages", (handlers) =>
  handlers
    .handle("create", ({ payload }) => write(Pages.create(payload)))
    .handle("list", ({ query }) => read(Pages.list(pageRequest(query))))
    .handle("get", ({ params }) => read(Pages.get(params.pageId)))
    .handle("update", ({ params, payload }) => write(Pages.update(params.pageId, payload)))
    .handle("delete", ({ params }) => write(Pages.remove(params.pageId)))
    .handle("publish", ({ params, payload }) => write(Pages.setStatus(params.pageId, "published", payload)))
    .handle("unpublish", ({ params, payload }) => write(Pages.setStatus(params.pageId, "draft", payload)))
    .handle("listVersions", ({ params, query }) => read(Pages.listVersions(params.pageId, pageRequest(query))))
    .handle("getVersion", ({ params }) => read(Pages.getVersion(params.pageId, params.version)))
    .handle("restoreVersion", ({ params, payload }) => write(Pages.restoreVersion(params.pageId, params.version, payload)))
    .handle("stats", ({ params, query }) => read(Pages.stats(params.pageId, query.days ?? 30)))
    .handle("chat", ({ params, payload }) =>
      write(Effect.gen(function*() {
        const principal = yield* requireCompany(payload.companyId)
        const page = yield* Pages.find(principal.companyId, params.pageId)
        const tool = toolEffect(yield* Effect.context<Effect.Services<ReturnType<typeof Pages.saveBody>>>())
        return yield* open({
          payer: payerOf(principal),
          feature: "campaigns",
          system: withBrand(`${systemPrompt}\n${landingPagePrompt}`, yield* brandGuide(principal.companyId)),
          messages: conversation(payload.history, payload.message),
          html: payload.bodyDocument.html,
          version: page.bodyVersion,
          target: {
            maxHtmlChars: maxBodyDocumentChars,
            saveHtml: (html) => tool.save(Pages.saveBody(principal.companyId, page.id, { ...payload.bodyDocument, html }, "chat"))
          }
        })
      }))))
